/** What became of one acknowledgement. */
export type AckOutcome = 'accepted' | 'stale' | 'duplicate' | 'unknown';

/**
 * A replayable interface's bookmark for one run. Acknowledgements may arrive in any
 * order; they are kept in a set and the contiguous run after the saved bookmark is extended
 * over them. The bookmark to save moves over that run only, in whole batches of `batch`
 * indices, so it never passes an index nobody acknowledged and the database sees one write
 * per batch. An acknowledgement with another run's correlation uuid is stale and dropped;
 * one for an index this run has not dispatched is unknown and dropped. Pure: no I/O.
 */
export class BookmarkTracker {
  private saved: number;
  private contiguousUpTo: number;
  private dispatchedUpTo: number;
  private readonly acked = new Set<number>();
  /**
   * Saved with the bookmark, for the next run's late watch (`watchAbandonedBelow.arrivedSince`):
   * no late arrival this run still owes at or below any index it recorded was claimed before
   * it (null: it owes none). The interface takes it from its feed (`LogFeed.arrivedSince`).
   */
  owedSince: Date | null;

  /**
   * @param start the saved bookmark this run resumes after
   * @param batch indices per bookmark move (ackBatch)
   * @param correlationUuid this run's `serverCorrelationUuid`
   * @param owedSince what the saved bookmark owed (its run watches that much below `start`)
   */
  constructor(
    start: number,
    readonly batch: number,
    readonly correlationUuid: string,
    owedSince: Date | null = null,
  ) {
    this.owedSince = owedSince;
    if (!Number.isSafeInteger(batch) || batch < 1)
      throw new RangeError(`batch must be a positive integer, got ${batch}`);
    this.saved = this.contiguousUpTo = this.dispatchedUpTo = start;
  }

  /** Records that `index` was published (or skipped) by this run; indices only grow. */
  dispatched(index: number): void {
    if (index > this.dispatchedUpTo) this.dispatchedUpTo = index;
  }

  /** A message the interface does not publish (outside includeTypes): acknowledged on its behalf. */
  skip(index: number): void {
    this.dispatched(index);
    this.record(index);
  }

  /** Positions without a message (holes the log passed): handled, like skipped ones. */
  skipRange(from: number, to: number): void {
    for (let index = from; index <= to; index++) this.skip(index);
  }

  /** A consumer's acknowledgement `{index, serverCorrelationUuid}`. */
  ack(index: number, correlationUuid: string): AckOutcome {
    if (correlationUuid !== this.correlationUuid) return 'stale';
    if (!Number.isSafeInteger(index) || index > this.dispatchedUpTo) return 'unknown';
    return this.record(index) ? 'accepted' : 'duplicate';
  }

  /** The bookmark to save: the saved one plus every whole batch of the contiguous run. */
  get target(): number {
    return this.saved + Math.floor((this.contiguousUpTo - this.saved) / this.batch) * this.batch;
  }

  /** The highest index such that it and every index before it were acknowledged. */
  get contiguous(): number {
    return this.contiguousUpTo;
  }

  /** The bookmark last confirmed as saved. */
  get bookmark(): number {
    return this.saved;
  }

  /** Acknowledged indices above the contiguous run (held back by a missing one). */
  get held(): number {
    return this.acked.size;
  }

  /** Confirms that `position` (a former `target`) is saved. */
  markSaved(position: number): void {
    if (position > this.saved) this.saved = position;
  }

  private record(index: number): boolean {
    if (index <= this.contiguousUpTo || this.acked.has(index)) return false;
    if (index !== this.contiguousUpTo + 1) {
      this.acked.add(index);
      return true;
    }
    let next = index + 1;
    while (this.acked.delete(next)) next++;
    this.contiguousUpTo = next - 1;
    return true;
  }
}
