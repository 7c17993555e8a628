import { TABLES } from '../log.constants.js';
import { hiddenReason } from './hidden-reason.sql.js';
import type { SqlQuery } from '@ordinal/pg';

/** A run of `scavenge_runs` as the scavenge reads it. */
export interface ScavengeRunRow {
  id: string;
  status: 'running' | 'finished' | 'failed';
  started_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  through: string;
  position: string;
  rows_erased: string;
  bytes_freed: string;
  batches: string;
  table_bytes_before: string | null;
  table_bytes_after: string | null;
  error: string | null;
}

const RUN_COLUMNS = `id::text, status, started_at, updated_at, finished_at, through::text, position::text,
  rows_erased::text, bytes_freed::text, batches::text, table_bytes_before::text, table_bytes_after::text, error`;

/**
 * The run to go on with: one left `running` (its process died: whoever holds the lock now
 * resumes it), else a new run up to the head. Run under the lock.
 */
export function startScavengeRun(): SqlQuery {
  return {
    // A row a CTE inserts is not visible to the statement's own reads: the new run comes from
    // its RETURNING, a left-over one from the table.
    text: `WITH left_over AS (
             SELECT ${RUN_COLUMNS} FROM ${TABLES.scavengeRuns} WHERE status = 'running' ORDER BY id DESC LIMIT 1
           ), created AS (
             INSERT INTO ${TABLES.scavengeRuns} (through, table_bytes_before)
             SELECT coalesce((SELECT max(index) FROM ${TABLES.messages}), 0), (SELECT coalesce(sum(pg_total_relation_size(relid)), 0)::bigint FROM pg_partition_tree('${TABLES.messages}'))
             WHERE NOT EXISTS (SELECT 1 FROM left_over)
             RETURNING ${RUN_COLUMNS}
           )
           SELECT * FROM left_over UNION ALL SELECT * FROM created`,
    values: [],
  };
}

/**
 * One batch, one statement (so one transaction): erases in place every row of
 * `(position, position + size]` that is hidden and not erased yet (body `null`, metadata NULL,
 * `erased` = why), and moves the run's position and counts in the same transaction, so a run
 * killed at any moment resumes from its last batch without counting anything twice. It only
 * updates existing rows (writers only insert new ones), so no writer waits on it. `bytes` are
 * the stored sizes (`pg_column_size`) of what was erased, less the `null` left in their place,
 * each row's at least 0: a body smaller than `null` (`{}`, with no metadata) frees nothing, and
 * does not take bytes off what the other rows freed.
 */
export function scavengeBatch(runId: string, position: number, size: number): SqlQuery {
  return {
    // `candidates` is materialised: the hidden reason is worked out once per row, and the
    // UPDATE reaches its rows by the primary key's range (not a scan of the whole table).
    // Both ranges are bounded by parameters alone: a bound through the `run` CTE
    // (`least(position + size, through)`) is no index condition, and every batch scanned the
    // whole table (676 rows/s on 100,000 rows, 1.5 s a batch).
    text: `WITH run AS (
             SELECT id, through FROM ${TABLES.scavengeRuns} WHERE id = $1::bigint AND position = $2::bigint
           ), candidates AS MATERIALIZED (
             SELECT c.index, c.reason,
                    greatest(pg_column_size(c.body) + coalesce(pg_column_size(c.metadata), 0)
                             - pg_column_size('null'::jsonb), 0) AS freed
             FROM (SELECT m.index, m.body, m.metadata, ${hiddenReason('m')} AS reason
                   FROM ${TABLES.messages} m, run
                   WHERE m.index > $2::bigint AND m.index <= $2::bigint + $3::bigint
                     AND m.index <= run.through AND m.erased IS NULL OFFSET 0) c
             WHERE c.reason IS NOT NULL
           ), erased AS (
             UPDATE ${TABLES.messages} m SET body = 'null'::jsonb, metadata = NULL, erased = c.reason
             FROM candidates c
             WHERE m.index > $2::bigint AND m.index <= $2::bigint + $3::bigint AND m.index = c.index
             RETURNING c.freed
           ), moved AS (
             UPDATE ${TABLES.scavengeRuns} r
             SET position = least($2::bigint + $3::bigint, run.through),
                 rows_erased = r.rows_erased + (SELECT count(*) FROM erased),
                 bytes_freed = r.bytes_freed + (SELECT coalesce(sum(freed), 0) FROM erased),
                 batches = r.batches + 1, updated_at = now()
             FROM run WHERE r.id = run.id
             RETURNING r.position, r.through
           )
           SELECT (SELECT position::text FROM moved) AS position, (SELECT through::text FROM moved) AS through,
                  (SELECT count(*) FROM erased)::int AS rows, (SELECT coalesce(sum(freed), 0) FROM erased)::text AS bytes`,
    values: [runId, position, size],
  };
}

/** Marks a run finished (or failed, with why), with the table's size after it. */
export function finishScavengeRun(runId: string, error: string | null): SqlQuery {
  return {
    text: `UPDATE ${TABLES.scavengeRuns}
           SET status = CASE WHEN $2::text IS NULL THEN 'finished' ELSE 'failed' END, error = $2::text,
               finished_at = now(), updated_at = now(), table_bytes_after = (SELECT coalesce(sum(pg_total_relation_size(relid)), 0)::bigint FROM pg_partition_tree('${TABLES.messages}'))
           WHERE id = $1::bigint
           RETURNING ${RUN_COLUMNS}`,
    values: [runId, error],
  };
}

/** The newest runs, newest first. */
export function readScavengeRuns(limit: number): SqlQuery {
  return {
    text: `SELECT ${RUN_COLUMNS} FROM ${TABLES.scavengeRuns} ORDER BY id DESC LIMIT $1`,
    values: [limit],
  };
}
