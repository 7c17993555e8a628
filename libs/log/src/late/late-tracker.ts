import type { StoredMessage } from '../message.js';
import { toStoredMessage, type MessageRow } from '../row-mapper.js';
import { toPosition } from '@ordinal/pg';
import { readArrivals, type ArrivalRow } from '../sql/index.js';
import { execute, type SqlRunner } from '@ordinal/pg';

/** Before every claim: what a position added without a time is owed from. */
const EPOCH = new Date(0);

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
 *
 * It also knows, for each position, a time no claim of an arrival there can be stamped
 * before (`missingSince`): when it was recorded, then the start of the last look-up that found
 * no row there. A reader that stops owing only positions it watches resumes with the
 * earliest of those as its `arrivedSince`, however late its look-ups come after a claim
 * (`owedSince`, saved with its position).
 */
export class LateTracker {
  /** Each position's xmax: of when it was passed, then of when its watch was first seen over. */
  private readonly pending = new Map<number, bigint>();
  /** Positions whose watch has been seen over (their xmax is of that moment). */
  private readonly unwatched = new Set<number>();
  /** Each position's latest time known to be before any claim of an arrival there. */
  private readonly missing = new Map<number, Date>();

  get size(): number {
    return this.pending.size;
  }

  /** The positions waiting, in order (for status). */
  positions(): number[] {
    return [...this.pending.keys()].sort((a, b) => a - b);
  }

  /**
   * Watches `positions` (passed with the snapshot bound `xmax`); `since`: a time before any
   * claim of an arrival there (when they were recorded), if known.
   */
  add(positions: number[], xmax: string, since?: Date): void {
    for (const p of positions) {
      if (this.pending.has(p)) continue;
      this.pending.set(p, BigInt(xmax));
      if (since) this.missing.set(p, since);
    }
  }

  /** A time before any claim of an arrival at `position` (undefined: not known, or not watched). */
  missingSince(position: number): Date | undefined {
    return this.missing.get(position);
  }

  /**
   * The earliest time this tracker still owes an arrival from, for a reader to save with its
   * position and resume with as `arrivedSince`: the earliest `missingSince` over the positions
   * it watches, arrivals `check` returned and not forgotten yet included (a time before their
   * claim). A position added without a time counts from the epoch: it repeats, never misses.
   * Null when it watches nothing. `except`: a position delivered in the transaction that saves
   * this (no longer owed once it commits).
   */
  owedSince(except?: number): Date | null {
    let since: Date | null = null;
    for (const position of this.pending.keys()) {
      if (position === except) continue;
      const known = this.missing.get(position) ?? EPOCH;
      if (since === null || known < since) since = known;
    }
    return since;
  }

  clear(): void {
    this.pending.clear();
    this.unwatched.clear();
    this.missing.clear();
  }

  forget(position: number): void {
    this.pending.delete(position);
    this.unwatched.delete(position);
    this.missing.delete(position);
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
        continue;
      }
      if (!this.pending.has(position)) continue;
      // No row at the look-up's start: one committing later is claimed later still.
      const known = this.missing.get(position);
      if (known === undefined || known < row.checked_at) this.missing.set(position, row.checked_at);
      if (!row.watching && !this.unwatched.has(position)) {
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
