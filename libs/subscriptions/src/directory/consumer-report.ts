import type { SubscriptionStatus } from '../subscription-context.js';

/** A live process that registered a consumer's group. */
export interface ConsumerProcess {
  /** `host:pid:random`, as in `consumer_leases.owner`. */
  id: string;
  pid: number | null;
  host: string | null;
  /** Milliseconds since its last heartbeat. */
  heartbeatAgeMs: number | null;
  /** Whether that process is this one. */
  self: boolean;
}

/** The process that owns a consumer. */
export interface ConsumerOwner extends ConsumerProcess {
  /**
   * Its heartbeat is overdue: more than half its lease's time to live has passed since the
   * last renewal (a healthy owner renews every third of it). It may be dead; the consumer's
   * `state` is then `stale` until the lease runs out (`unowned`) or a heartbeat comes.
   */
  stale: boolean;
  /** Milliseconds until its lease runs out unless renewed (a peer may claim it then). */
  leaseExpiresInMs: number | null;
}

/** One partition of a partitioned projection. */
export interface PartitionReport {
  name: string;
  position: number;
  lag: number;
  state: SubscriptionReport['state'];
  lastError: string | null;
  parked: number;
  owner: ConsumerOwner | null;
  standbys: ConsumerProcess[];
}

/** Facts only the process that runs a consumer knows: left out of the reports of the others. */
export type OwnerOnlyField =
  'lastErrorAt' | 'retries' | 'pendingLate' | 'lateDelivered' | 'skipped' | 'parkedHere';

/**
 * A subscription's (or projection's) status, whichever process runs it: position, the safe
 * head and the lag behind it, state, last error, parked messages, the owning process and the
 * processes standing by; for a partitioned projection the aggregate (lowest position, highest
 * lag, worst state) and `partitions`. Fields only the owner knows (`retries`, `pendingLate`,
 * …) are present only in the report of the process that runs it: another process leaves them
 * out rather than guess.
 */
export type SubscriptionReport = Omit<SubscriptionStatus, OwnerOnlyField | 'state'> &
  Partial<Pick<SubscriptionStatus, OwnerOnlyField>> & {
    /**
     * The owner's state, or (in the report of another process) `unowned` when no live process
     * holds its lease, `stale` while the owner's heartbeat is overdue (it may be dead).
     */
    state: SubscriptionStatus['state'] | 'stale';
    head: number;
    lag: number;
    parked: number;
    owner: ConsumerOwner | null;
    /** The other live processes that registered it: they take over when the owner goes. */
    standbys: ConsumerProcess[];
    /** Milliseconds since the checkpoint last moved (null when unknown). */
    progressAgeMs: number | null;
    /** Registered in this process too (it can run it). */
    local: boolean;
    partitions?: PartitionReport[];
  };
