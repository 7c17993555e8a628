import type { StoredMessage } from '../message.js';
import { toStoredMessage, type MessageRow } from '../row-mapper.js';
import { toPosition } from '@ordinal/pg';
import { readArrivals, type ArrivalRow } from '../sql/index.js';
import { execute, type SqlRunner } from '@ordinal/pg';

/**
 * Positions a reader passed without a row that are watched for a late one (abandoned holes,
 * and exact releases while `watch_until` has not passed), each with the snapshot xmax of when
 * it was passed. A position whose row has since committed is a late arrival (delivered to that
 * reader, marked late). One is forgotten once its watch is over *and* every transaction with
 * an id that could have written it has ended: the xid test alone misses a session that drew
 * the position by hand (`nextval` assigns no id) or inserts at a chosen index. Those are
 * covered by the `messages_index_passed` trigger: a row can be inserted at a passed position
 * only while it is watched, and such a transaction takes its id first. So once the watch is
 * seen over, the tracker waits for every transaction running at that moment (the xmax of that
 * snapshot), not only those running when the position was passed: one that inserted inside
 * the window and commits later is still delivered. A subscription keeps one; the live router
 * keeps one for all its feeds.
 */
export class LateTracker {
  /** Each position's xmax: of when it was passed, then of when its watch was first seen over. */
  private readonly pending = new Map<number, bigint>();
  /** Positions whose watch has been seen over (their xmax is of that moment). */
  private readonly unwatched = new Set<number>();

  get size(): number {
    return this.pending.size;
  }

  /** The positions waiting, in order (for status). */
  positions(): number[] {
    return [...this.pending.keys()].sort((a, b) => a - b);
  }

  add(positions: number[], xmax: string): void {
    for (const p of positions) if (!this.pending.has(p)) this.pending.set(p, BigInt(xmax));
  }

  clear(): void {
    this.pending.clear();
    this.unwatched.clear();
  }

  forget(position: number): void {
    this.pending.delete(position);
    this.unwatched.delete(position);
  }

  /** Looks the pending positions up; returns the arrived messages (still pending until `forget`). */
  async check(runner: SqlRunner): Promise<StoredMessage[]> {
    if (this.pending.size === 0) return [];
    const rows = await execute<ArrivalRow>(runner, readArrivals(this.positions()));
    const arrived: StoredMessage[] = [];
    for (const row of rows) {
      const position = toPosition(row.pending);
      if (row.index !== null && row.index !== undefined) {
        arrived.push(toStoredMessage(row as MessageRow));
      } else if (!row.watching && !this.unwatched.has(position)) {
        // Its watch is over: wait for every transaction running now, which includes any that
        // inserted there while it was watched.
        this.unwatched.add(position);
        const passed = this.pending.get(position) ?? 0n;
        const now = BigInt(row.xmax);
        this.pending.set(position, now > passed ? now : passed);
      } else if (!row.watching && BigInt(row.xmin) >= (this.pending.get(position) ?? 0n)) {
        // Its watch is over and every transaction that could still write it has ended.
        this.forget(position);
      }
    }
    return arrived;
  }
}
