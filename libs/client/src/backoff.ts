/** Reconnection delays: exponential from `initialMs` to `maxMs`, with jitter. */
export interface BackoffOptions {
  /** @default 250 */
  initialMs?: number;
  /** @default 10000 */
  maxMs?: number;
  /** @default 2 */
  factor?: number;
  /** Fraction of random spread either way. @default 0.2 */
  jitter?: number;
}

/** The delay before reconnection attempt `attempt` (0-based). */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const initial = options.initialMs ?? 250;
  const max = options.maxMs ?? 10_000;
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.2;
  const base = Math.min(max, initial * factor ** Math.min(attempt, 30));
  return Math.max(0, Math.round(base * (1 + jitter * (2 * Math.random() - 1))));
}
