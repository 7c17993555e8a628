import type { Lease } from './lease.js';

/**
 * Something only one process may run at a time (a subscription, a projection's partition, a
 * push interface). ConsumerOwnership calls `acquired` when this process claimed it and
 * `released` when it must stop (its share shrank, its lease was lost, shutdown).
 */
export interface OwnedConsumer {
  /** The lease's name: unique across the database. */
  readonly name: string;
  /** Start running; check `lease.isHeld()` before each batch and `lease.fence(tx)` before it commits. */
  acquired(lease: Lease): void;
  /** Stop after the batch in flight; resolve once stopped. Called more than once is fine. */
  released(): Promise<void>;
  /**
   * What to record on its lease row with each heartbeat and at hand-over (small, JSON): shown
   * to every process, and handed to the next owner in `Lease.previous`. Optional.
   */
  progress?(): unknown;
}
