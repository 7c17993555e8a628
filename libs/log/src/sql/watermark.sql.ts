import { RUNNING_XID_BOUND } from './running-xid-bound.sql.js';
import { LOCKS, PASSED_SEQUENCE, SEQUENCE, TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/**
 * Final positions after `position`, in order: committed rows and positions recorded in
 * `log_skipped` (abandoned or released by any process), merged from two index scans. A
 * position may come twice (a late arrival is in both). Sorted by the bigint, never by text
 * ('10' < '9').
 *
 * The rows are bounded by the sequence: every committed row's position was drawn (or set, by a
 * bulk import, before its commit) at or below its current value. Without the bound the index
 * scan walks every entry of an open bulk import above the head — a million uncommitted tuples,
 * each checked in the heap — at every call while the import runs.
 */
export function readFinalPositionsAfter(position: number, limit: number): SqlQuery {
  return {
    text: `SELECT p::text AS index FROM (
             (SELECT index AS p FROM ${TABLES.messages}
              WHERE index > $1 AND index <= (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${SEQUENCE})
              ORDER BY index LIMIT $2)
             UNION ALL
             (SELECT position AS p FROM ${TABLES.skipped} WHERE position > $1 ORDER BY position LIMIT $2)
           ) f ORDER BY f.p LIMIT $2`,
    values: [position, limit],
  };
}

/**
 * How many positions in [from, to] are final: committed rows plus recorded positions without
 * a row (a late arrival is both; it counts once). Equal to the range's length means the
 * watermark may pass all of it. Two index scans, however long the range.
 */
export function countFinalBetween(from: number, to: number): SqlQuery {
  return {
    text: `SELECT ((SELECT count(*) FROM ${TABLES.messages} WHERE index BETWEEN $1 AND $2)
                 + (SELECT count(*) FROM ${TABLES.skipped} s WHERE s.position BETWEEN $1 AND $2
                      AND NOT EXISTS (SELECT 1 FROM ${TABLES.messages} m WHERE m.index = s.position)))::text AS final`,
    values: [from, to],
  };
}

/** The watermark a process reached and wrote down: every position at or below it is final. */
export function readPersistedWatermark(): SqlQuery {
  return {
    text: `SELECT position::text AS position FROM ${TABLES.watermark} WHERE id = 1`,
    values: [],
  };
}

/** Moves the written-down watermark forward (never back: several processes write it). */
export function persistWatermark(position: number): SqlQuery {
  return {
    text: `UPDATE ${TABLES.watermark} SET position = $1, updated_at = now() WHERE id = 1 AND position < $1`,
    values: [position],
  };
}

/** Committed positions inside [from, to]. */
export function readPositionsBetween(from: number, to: number): SqlQuery {
  return {
    text: `SELECT index::text AS index FROM ${TABLES.messages} WHERE index >= $1 AND index <= $2 ORDER BY ${TABLES.messages}.index`,
    values: [from, to],
  };
}

/**
 * The transactions that could still fill a hole seen now: those holding the messages table
 * in RowExclusiveLock (every INSERT, Ordinal's own draws its positions inside it) or the
 * position sequence in RowExclusiveLock (every `nextval`, `setval`, also one written by hand
 * outside an INSERT: PostgreSQL keeps that lock until the transaction ends, whoever the role),
 * with what identifies each (pid and transaction start) — and the snapshot's xmax, for the
 * fallback when this view of other sessions is not available. A session holding both is one
 * writer.
 */
export function readLogWriters(): SqlQuery {
  return {
    text: `SELECT DISTINCT a.pid, a.xact_start::text AS xact_start, a.application_name, a.backend_xid::text AS xid,
                  ${RUNNING_XID_BOUND} AS xmax
           FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'relation' AND l.relation IN ('${TABLES.messages}'::regclass, '${SEQUENCE}'::regclass)
             AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND l.mode = 'RowExclusiveLock' AND l.granted AND l.pid <> pg_backend_pid()
           UNION ALL
           SELECT NULL, NULL, NULL, NULL, ${RUNNING_XID_BOUND}`,
    values: [],
  };
}

/** How many of the given transactions (pid, xact_start) are still running. */
export function countRunning(pids: number[], starts: string[]): SqlQuery {
  return {
    text: `SELECT count(*)::int AS running FROM pg_stat_activity a
           JOIN unnest($1::int[], $2::text[]) AS w(pid, xact_start) ON a.pid = w.pid AND a.xact_start::text = w.xact_start`,
    values: [pids, starts],
  };
}

/** The fallback test: has every transaction that was running below `xmax` ended? */
export function snapshotPassed(xmax: string): SqlQuery {
  return {
    text: `SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS passed`,
    values: [xmax],
  };
}

/**
 * Moves the passed position (`log_passed_position`) up to `position`, never back, before the
 * watermark records or passes anything up to it: from then on a row inserted at or below it
 * is checked by the `messages_index_passed` trigger (refused unless its position is watched).
 * Several processes move it: the advisory lock makes read-then-set one step (a sequence is not
 * transactional, so the lock, held to the end of this statement's transaction, is what orders
 * them).
 */
export function raisePassedPosition(position: number): SqlQuery {
  return {
    text: `WITH lock AS MATERIALIZED (SELECT pg_advisory_xact_lock($2::bigint))
           SELECT setval('${PASSED_SEQUENCE}', greatest(coalesce(pg_sequence_last_value('${PASSED_SEQUENCE}'), 0), $1::bigint))::text AS passed
           FROM lock`,
    values: [position, LOCKS.passed],
  };
}

/**
 * Records passed-over positions durably before the watermark moves past them: abandoned ones
 * (so later arrivals inside them are found) and exactly released ones (so no process, after a
 * restart say, holds them again). Both are watched for a late row until `watch_until`
 * (`lateWatchMs` from now): an exact release only knows that no running transaction can fill
 * the position, not that no session will insert there later.
 */
export function recordSkipped(
  from: number,
  to: number,
  heldMs: number,
  watchMs: number,
  releasedExactly = false,
): SqlQuery {
  return {
    text: `INSERT INTO ${TABLES.skipped} (position, held_ms, released_exactly, watch_until)
           SELECT p, $3, $4, now() + make_interval(secs => $5::float8 / 1000) FROM generate_series($1::bigint, $2::bigint) p
           ON CONFLICT (position) DO NOTHING`,
    values: [from, to, Math.round(heldMs), releasedExactly, watchMs],
  };
}

/**
 * Records the positions in [from, to] without a row as released exactly (and watched): the
 * start-up shortcut passes them at once, every transaction that could have drawn them having
 * ended, but a row can still be inserted there by hand. One statement; the caller bounds the
 * range.
 */
export function recordFinalHoles(from: number, to: number, watchMs: number): SqlQuery {
  return {
    text: `INSERT INTO ${TABLES.skipped} (position, held_ms, released_exactly, watch_until)
           SELECT p, 0, true, now() + make_interval(secs => $3::float8 / 1000) FROM generate_series($1::bigint, $2::bigint) p
           WHERE NOT EXISTS (SELECT 1 FROM ${TABLES.messages} m WHERE m.index = p)
           ON CONFLICT (position) DO NOTHING`,
    values: [from, to, watchMs],
  };
}

/**
 * Marks watched positions whose row has since committed; returns them (late arrivals), each
 * with whether it had been released exactly. Abandoned positions are looked at for ever,
 * exact releases while they are watched: two branches, each on its partial index.
 *
 * `arrived_at` is the clock when the row is marked, not `now()` (the statement's start, which
 * can precede the row's commit): it is after the row committed, so after any late look-up
 * that did not see the row (`readArrivals`' `checked_at`) — what a resuming reader's
 * `arrivedSince` is compared with.
 */
export function claimLateArrivals(): SqlQuery {
  return {
    text: `UPDATE ${TABLES.skipped} s SET arrived_at = clock_timestamp()
           FROM (SELECT position FROM ${TABLES.skipped} WHERE arrived_at IS NULL AND NOT released_exactly
                 UNION ALL
                 SELECT position FROM ${TABLES.skipped}
                 WHERE released_exactly AND arrived_at IS NULL AND watch_until IS NOT NULL AND watch_until > now()) o
           JOIN ${TABLES.messages} m ON m.index = o.position
           WHERE s.position = o.position AND s.arrived_at IS NULL
           RETURNING s.position::text AS position, s.released_exactly AS exact`,
    values: [],
  };
}

/** The highest position handed out so far (by the sequence, or by gapless history). */
export function readDrawnPosition(): SqlQuery {
  return {
    text: `SELECT greatest((SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${SEQUENCE}),
                           (SELECT coalesce(max(index), 0) FROM ${TABLES.messages}))::text AS drawn`,
    values: [],
  };
}
