import { TABLES } from '../log.constants.js';
import { MESSAGE_COLUMNS } from '../row-mapper.js';
import type { MessageRow } from '../row-mapper.js';
import type { SqlQuery } from '@ordinal/pg';
import { RUNNING_XID_BOUND } from './running-xid-bound.sql.js';
import { hiddenReason } from './hidden-reason.sql.js';

/**
 * Passed positions inside (from, to] that are watched for a late row — those a reader passed
 * without seeing, unless their row is in its page — with an id above every running transaction (RUNNING_XID_BOUND): every
 * transaction with an id that could still fill them has one below it. Abandoned positions,
 * and exact releases until their `watch_until` (an exact release is a claim the late watch
 * checks). One range scan of the primary key, as before. `recorded_at`: when the position
 * was recorded, a time before any claim of an arrival there (`claimLateArrivals`).
 */
export function readSkippedBetween(from: number, to: number): SqlQuery {
  return {
    text: `SELECT position::text AS position, ${RUNNING_XID_BOUND} AS xmax, abandoned_at AS recorded_at
           FROM ${TABLES.skipped} WHERE position > $1 AND position <= $2
             AND (NOT released_exactly OR watch_until > now()) ORDER BY ${TABLES.skipped}.position`,
    values: [from, to],
  };
}

/**
 * Whether a row may still commit at a passed position at or below `upTo`: one still watched
 * (a row may be inserted there, or one inserted while it was watched has not arrived yet:
 * its watch is then `infinity`). Past its watch, the trigger `messages_index_passed` refuses
 * a row there. Two branches, each on its partial index (exact releases by `watch_until`,
 * abandoned positions by position), so the exact releases no longer watched are never read.
 */
export function readWatchedAtOrBelow(upTo: number): SqlQuery {
  return {
    text: `SELECT EXISTS (SELECT 1 FROM ${TABLES.skipped} WHERE released_exactly AND arrived_at IS NULL
                            AND watch_until IS NOT NULL AND watch_until > now() AND position <= $1)
               OR EXISTS (SELECT 1 FROM ${TABLES.skipped} WHERE arrived_at IS NULL AND NOT released_exactly
                            AND watch_until > now() AND position <= $1) AS watched`,
    values: [upTo],
  };
}

/**
 * After a restart: watched positions at or below a reader's position that have not arrived
 * yet, or arrived since `arrivedSince` (when the reader last wrote its position down: an
 * arrival found by some other process while this reader was away is still its to deliver;
 * one it delivered before it stopped may come again, at least once). Abandoned positions
 * whatever their age; exact releases while watched, or arrived since. `arrivedSince` must come
 * from the reader (a feed's `arrivedSince` when the bookmark was saved), not the time of the
 * save: an arrival claimed before the save may not have reached the reader yet. `recorded_at`:
 * as in `readSkippedBetween`.
 */
export function readOpenSkipped(upTo: number, arrivedSince: Date | null = null): SqlQuery {
  // Four branches, each on its partial index (open: log_skipped_open_ix, arrived:
  // log_skipped_arrived_ix; exact: log_skipped_exact_watch_ix, log_skipped_exact_arrived_ix),
  // so the rows of exact releases no longer watched, however many, are never read.
  return {
    text: `SELECT s.position::text AS position, ${RUNNING_XID_BOUND} AS xmax, s.abandoned_at AS recorded_at FROM (
             SELECT position, abandoned_at FROM ${TABLES.skipped} WHERE arrived_at IS NULL AND NOT released_exactly AND position <= $1
             UNION ALL
             SELECT position, abandoned_at FROM ${TABLES.skipped} WHERE arrived_at IS NOT NULL AND arrived_at >= $2 AND NOT released_exactly AND position <= $1
             UNION ALL
             SELECT position, abandoned_at FROM ${TABLES.skipped} WHERE released_exactly AND arrived_at IS NULL AND watch_until IS NOT NULL
               AND watch_until > now() AND position <= $1
             UNION ALL
             SELECT position, abandoned_at FROM ${TABLES.skipped} WHERE released_exactly AND arrived_at IS NOT NULL AND arrived_at >= $2 AND position <= $1
           ) s ORDER BY s.position`,
    values: [upTo, arrivedSince ?? new Date(8.64e15)],
  };
}

/**
 * A pending position with its row when it has arrived, the snapshot's xmin and xmax, whether the
 * position is still watched (its `watch_until` not passed; null for positions recorded before
 * there was one), and when the look-up started (`checked_at`: a row it did not see commits
 * after it, so its claim is stamped after it too).
 */
export type ArrivalRow = Partial<MessageRow> & {
  pending: string;
  xmin: string;
  xmax: string;
  watching: boolean | null;
  checked_at: Date;
};

/** Why an arrived row reads back as a tombstone (its stream deleted or truncated meanwhile), as every reader tells it. */
const ARRIVAL_HIDDEN_REASON = hiddenReason('m');

/**
 * Which of the pending positions have a committed row now (with why it reads back as a
 * tombstone, if it does: a late arrival is delivered as readers read it then), and which are
 * still watched.
 */
export function readArrivals(positions: number[]): SqlQuery {
  return {
    text: `SELECT p.pending::text AS pending, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, now() AS checked_at,
                  ${RUNNING_XID_BOUND} AS xmax, s.watch_until > now() AS watching, ${MESSAGE_COLUMNS.split(
                    ', ',
                  )
                    .map((c) => `m.${c}`)
                    .join(', ')}, ${ARRIVAL_HIDDEN_REASON} AS tombstone
           FROM unnest($1::bigint[]) AS p(pending) LEFT JOIN ${TABLES.messages} m ON m.index = p.pending
             LEFT JOIN ${TABLES.skipped} s ON s.position = p.pending
           ORDER BY p.pending`,
    values: [positions],
  };
}
