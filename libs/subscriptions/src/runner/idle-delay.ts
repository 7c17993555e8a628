/**
 * The longest an idle subscription waits between its own looks at the log while NOTIFY reaches
 * its process. It is only the last net: other processes' commits wake it at once (NOTIFY, told
 * by the live router), and the router's own poll (`livePollMs`, 1 s) wakes it for a commit no
 * NOTIFY told of.
 */
export const IDLE_BACKOFF_MAX_MS = 10_000;

/**
 * How long an idle subscription waits for a wake before it reads the log again by itself,
 * after `rounds` such reads in a row found nothing (a wake or a batch starts again at 0).
 * While `notified` (NOTIFY reaches the process: LiveRouter.notifyVerified) it doubles from
 * `idlePollMs` up to IDLE_BACKOFF_MAX_MS (never below `idlePollMs`); otherwise polling is the
 * only way it sees other processes' commits, and it stays at `idlePollMs`.
 */
export function idleBackoffMs(idlePollMs: number, rounds: number, notified: boolean): number {
  if (!notified) return idlePollMs;
  const cap = Math.max(idlePollMs, IDLE_BACKOFF_MAX_MS);
  return Math.min(cap, idlePollMs * 2 ** Math.min(rounds, 30));
}
