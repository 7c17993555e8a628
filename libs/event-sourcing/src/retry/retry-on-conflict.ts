import { VersionConflictError } from '@ordinal/log';

/** Options of `retryOnConflict`. */
export interface RetryOptions {
  /** Tries in all, the first included (Cursus recommends 3). @default 3 */
  attempts?: number;
  /** Upper bound of the random pause before try n, times n-1, so colliding writers spread out. @default 5 */
  backoffMs?: number;
}

/**
 * Runs `command` (which must load fresh state, decide, and save) again after a
 * `VersionConflictError`, up to `attempts` tries in all; the last conflict is rethrown. Any
 * other error is rethrown at once.
 */
export async function retryOnConflict<T>(
  command: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 3;
  const backoffMs = options.backoffMs ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await command(attempt);
    } catch (error) {
      if (!(error instanceof VersionConflictError) || attempt >= attempts) throw error;
      const pause = Math.random() * backoffMs * attempt;
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
