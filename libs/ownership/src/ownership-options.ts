/**
 * The smallest takeover bound: below 500 ms a tick (20%) is shorter than a loaded machine's
 * heartbeat round trip. Checked where the option is resolved (the log's options).
 */
export const MIN_TAKEOVER_MS = 500;

/** Timings of consumer ownership, derived from one setting. */
export interface OwnershipTimings {
  /** A dead owner's consumers are running elsewhere within this bound (ms). */
  takeoverMs: number;
  /** A lease's time to live from each renewal (ms): 60% of the bound. */
  ttlMs: number;
  /** Heartbeat and rebalance period (ms): 20% of the bound. */
  tickMs: number;
  /** A process without a heartbeat for this long is forgotten (its row, its name on leases): 10× the bound (50 s by default). */
  forgetAfterMs: number;
}

/**
 * The bound is split so that the worst case fits in it: the owner's last renewal is at most
 * `ttlMs` before its lease expires, and a peer's next tick comes at most `tickMs` after that;
 * the remaining `tickMs` covers the claim and a loaded machine. A healthy owner renews every
 * `tickMs`, so it can miss two heartbeats (an event loop or database stall of ~2 ticks)
 * before it loses its consumers.
 */
export function ownershipTimings(takeoverMs: number): OwnershipTimings {
  return {
    takeoverMs,
    ttlMs: Math.round(takeoverMs * 0.6),
    tickMs: Math.round(takeoverMs * 0.2),
    forgetAfterMs: takeoverMs * 10,
  };
}

/** What `ConsumerOwnership` is given, resolved where the log's options are (once). */
export interface OwnershipOptions {
  /** A replica reader runs no consumer: leases are writes. */
  readOnly: boolean;
  timings: OwnershipTimings;
}

/** Injection token of `OwnershipOptions` (the log module provides it from its resolved options). */
export const OWNERSHIP_OPTIONS = Symbol('OWNERSHIP_OPTIONS');
