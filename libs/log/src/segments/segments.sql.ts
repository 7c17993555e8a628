import { LOCKS, SEQUENCE, TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/** A segment as `log_segments` records it, with its size on disk (hot) or in the archive store (archived). */
export interface SegmentRow {
  first_index: string;
  end_index: string;
  table_name: string;
  tier: string;
  created_at: Date;
  /** `pg_total_relation_size` of its partition (table, indexes, TOAST). */
  bytes: string;
  /** The planner's estimate of its rows (`pg_class.reltuples`; -1 before the first ANALYZE); an archived one's rows. */
  estimated_rows: string;
  archived_at: Date | null;
}

/** Every segment, oldest first. */
export function listSegments(): SqlQuery {
  return {
    text: `SELECT s.first_index::text, s.end_index::text, s.table_name, s.tier, s.created_at, s.archived_at,
                  CASE WHEN s.tier = 'archived' THEN (s.manifest->>'bytes')::bigint
                       ELSE coalesce(pg_total_relation_size(c.oid), 0) END::text AS bytes,
                  CASE WHEN s.tier = 'archived' THEN (s.manifest->>'rows')::bigint
                       ELSE coalesce(c.reltuples, -1)::bigint END::text AS estimated_rows
           FROM ${TABLES.segments} s LEFT JOIN pg_class c
             ON c.relname = s.table_name AND c.relnamespace = current_schema()::regnamespace
           ORDER BY s.first_index`,
    values: [],
  };
}

/**
 * What the keeper needs to plan: the segment size, the end of the last segment, the highest
 * position used (the gapless head, the sequence, the highest row) and whether the log holds
 * a message at all.
 */
export function readSegmentPlan(): SqlQuery {
  return {
    text: `SELECT (SELECT segment_size FROM ${TABLES.segmentSettings} WHERE id = 1)::text AS size,
                  (SELECT coalesce(max(end_index), 1) FROM ${TABLES.segments})::text AS covered,
                  greatest((SELECT position FROM ${TABLES.logHead} WHERE id = 1),
                           (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${SEQUENCE}),
                           (SELECT coalesce(max(index), 0) FROM ${TABLES.messages}))::text AS used,
                  EXISTS (SELECT 1 FROM ${TABLES.messages}) AS holds_messages`,
    values: [],
  };
}

/** Serialises segment changes across every process on the database (until the transaction ends). */
export function lockSegments(): SqlQuery {
  return { text: 'SELECT pg_advisory_xact_lock($1::bigint)', values: [LOCKS.segments] };
}

/**
 * The statements that add the segment [first, end) ahead of the head: a table like `messages`
 * (its columns, defaults, checks and column comments), attached as a partition. `ATTACH PARTITION` takes
 * `messages` in SHARE UPDATE EXCLUSIVE mode, which appends (ROW EXCLUSIVE) and reads pass;
 * `CREATE TABLE … PARTITION OF` would take ACCESS EXCLUSIVE, and wait for every reader. The
 * names are built from integers, never from input (DDL takes no parameters).
 */
export function addSegment(table: string, first: number, end: number): SqlQuery[] {
  return [
    {
      text: `CREATE TABLE ${table} (LIKE ${TABLES.messages} INCLUDING DEFAULTS INCLUDING CONSTRAINTS
               INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS)`,
      values: [],
    },
    {
      text: `COMMENT ON TABLE ${table} IS 'A segment of the log (a partition of messages by index range; log_segments says which).'`,
      values: [],
    },
    {
      text: `ALTER TABLE ${TABLES.messages} ATTACH PARTITION ${table} FOR VALUES FROM (${first}) TO (${end})`,
      values: [],
    },
    {
      text: `INSERT INTO ${TABLES.segments} (first_index, end_index, table_name) VALUES ($1, $2, $3)`,
      values: [first, end, table],
    },
  ];
}

/** Takes the segments' lock if it is free: `locked` says whether it was. */
export function tryLockSegments(): SqlQuery {
  return {
    text: 'SELECT pg_try_advisory_xact_lock($1::bigint) AS locked',
    values: [LOCKS.segments],
  };
}

/** Bounds this transaction's lock waits (SQLSTATE 55P03 past it). */
export function boundLockWait(ms: number): SqlQuery {
  return { text: `SELECT set_config('lock_timeout', $1, true)`, values: [`${ms}ms`] };
}

/** Records a new segment size (only while the log holds no message: `SegmentKeeper.start`). */
export function setSegmentSize(size: number): SqlQuery {
  return {
    text: `UPDATE ${TABLES.segmentSettings} SET segment_size = $1 WHERE id = 1`,
    values: [size],
  };
}

/** Drops an empty log's segments, to lay them out again at another size. */
export function dropSegment(table: string): SqlQuery[] {
  return [
    { text: `DROP TABLE ${table}`, values: [] },
    { text: `DELETE FROM ${TABLES.segments} WHERE table_name = $1`, values: [table] },
  ];
}
