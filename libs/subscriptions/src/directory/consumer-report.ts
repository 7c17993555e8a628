import type { SubscriptionStatus } from '../subscription-context.js';

/** The process that owns a consumer. */
export interface ConsumerOwner {
  /** `host:pid:random`, as in `consumer_leases.owner`. */
  id: string;
  pid: number | null;
  host: string | null;
  /** Milliseconds since its last heartbeat renewed the lease. */
  heartbeatAgeMs: number | null;
  /** Whether that process is this one. */
  self: boolean;
}

/** One partition of a partitioned projection. */
export interface PartitionReport {
  name: string;
  position: number;
  lag: number;
  state: SubscriptionStatus['state'];
  lastError: string | null;
  parked: number;
  owner: ConsumerOwner | null;
}

/**
 * A subscription's (or projection's) status, whichever process runs it: position, the safe
 * head and the lag behind it, state, last error, parked messages, the owning process; for a
 * partitioned projection the aggregate (lowest position, highest lag, worst state) and
 * `partitions`. Fields only the owner knows (retries, pendingLate, …) are those of this
 * process's own copy, zero when another process runs it.
 */
export type SubscriptionReport = SubscriptionStatus & {
  head: number;
  lag: number;
  parked: number;
  owner: ConsumerOwner | null;
  /** Milliseconds since the checkpoint last moved (null when unknown). */
  progressAgeMs: number | null;
  /** Registered in this process too (it can run it). */
  local: boolean;
  partitions?: PartitionReport[];
};
