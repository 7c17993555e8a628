import { TABLES } from '../log.constants.js';
import { MESSAGE_COLUMNS } from '../row-mapper.js';
import type { MessageRow } from '../row-mapper.js';
import type { SqlQuery } from '@ordinal/pg';

/**
 * Abandoned positions inside (from, to] — those a reader passed without seeing, unless their
 * row is in its page — with the snapshot's xmax: every transaction that could still fill them
 * has an id below it. Exactly released positions are left out (their writers had ended).
 */
export function readSkippedBetween(from: number, to: number): SqlQuery {
  return {
    text: `SELECT position::text AS position, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax
           FROM ${TABLES.skipped} WHERE position > $1 AND position <= $2 AND NOT released_exactly ORDER BY ${TABLES.skipped}.position`,
    values: [from, to],
  };
}

/**
 * After a restart: abandoned positions at or below a reader's position that have not arrived
 * yet, or arrived since `arrivedSince` (when the reader last wrote its position down: an
 * arrival found by some other process while this reader was away is still its to deliver;
 * one it delivered before it stopped may come again, at least once).
 */
export function readOpenSkipped(upTo: number, arrivedSince: Date | null = null): SqlQuery {
  // Two branches, each on its partial index (open: log_skipped_open_ix; arrived:
  // log_skipped_arrived_ix), so the rows of exactly released holes, however many, are never read.
  return {
    text: `SELECT s.position::text AS position, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax FROM (
             SELECT position FROM ${TABLES.skipped} WHERE arrived_at IS NULL AND NOT released_exactly AND position <= $1
             UNION ALL
             SELECT position FROM ${TABLES.skipped} WHERE arrived_at IS NOT NULL AND arrived_at >= $2 AND NOT released_exactly AND position <= $1
           ) s ORDER BY s.position`,
    values: [upTo, arrivedSince ?? new Date(8.64e15)],
  };
}

/** A pending position with its row when it has arrived, and the snapshot's xmin. */
export type ArrivalRow = Partial<MessageRow> & { pending: string; xmin: string };

/** Which of the pending positions have a committed row now. */
export function readArrivals(positions: number[]): SqlQuery {
  return {
    text: `SELECT p.pending::text AS pending, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, ${MESSAGE_COLUMNS.split(
      ', ',
    )
      .map((c) => `m.${c}`)
      .join(', ')}
           FROM unnest($1::bigint[]) AS p(pending) LEFT JOIN ${TABLES.messages} m ON m.index = p.pending
           ORDER BY p.pending`,
    values: [positions],
  };
}
