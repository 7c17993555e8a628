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
 * the position by hand (`nextval` assigns no id) or inserts at a chosen index. A subscription
 * keeps one; the live router keeps one for all its feeds.
 */
export class LateTracker {
  private readonly pending = new Map<number, bigint>();

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
  }

  forget(position: number): void {
    this.pending.delete(position);
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
      } else if (!row.watching && BigInt(row.xmin) >= (this.pending.get(position) ?? 0n)) {
        // Its watch is over and every transaction that could still write it has ended.
        this.pending.delete(position);
      }
    }
    return arrived;
  }
}
