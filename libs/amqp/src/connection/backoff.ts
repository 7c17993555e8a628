/** Settings of an exponential back-off. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** @default 2 */
  factor?: number;
  /** Fraction of the delay drawn at random, spreading reconnects of many clients. @default 0.2 */
  jitter?: number;
}

/**
 * The delay before retry number `attempt` (0-based): `initialMs * factor^attempt`, capped at
 * `maxMs`, with up to `jitter` of it drawn at random below the cap (never above it).
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const factor = policy.factor ?? 2;
  const jitter = policy.jitter ?? 0.2;
  const base = Math.min(policy.maxMs, policy.initialMs * factor ** Math.min(attempt, 50));
  return Math.round(base * (1 - jitter * random()));
}

/** Waits `ms`, or less when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
