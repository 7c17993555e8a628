import type { StoredMessage } from '../message.js';
import { toStoredMessage, type MessageRow } from '../row-mapper.js';
import { toPosition } from '@ordinal/pg';
import { readArrivals, type ArrivalRow } from '../sql/index.js';
import { execute, type SqlRunner } from '@ordinal/pg';

/**
 * Positions a reader passed inside abandoned holes, each with the snapshot xmax of when it was
 * passed. A position whose row has since committed is a late arrival (delivered to that
 * reader, marked late); one whose writers have all ended without a row is a rolled-back hole
 * and is forgotten. A subscription keeps one; the live router keeps one for all its feeds.
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
      } else if (BigInt(row.xmin) >= (this.pending.get(position) ?? 0n)) {
        // Every transaction that could still write it has ended: the hole is final.
        this.pending.delete(position);
      }
    }
    return arrived;
  }
}
