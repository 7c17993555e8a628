import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';
import { ES_TABLES } from '../event-sourcing.constants.js';

/** A stream's head and lifecycle as `readStreamState` returns them. */
export interface StreamStateRow {
  version: string;
  state: 'live' | 'deleted' | 'tombstoned';
  deleted_through: string;
  max_age: string | null;
  max_count: string | null;
  truncate_before: string | null;
  custom: Record<string, unknown> | null;
  metadata_version: string;
}

/** A stream's version, state and metadata in one round trip (index lookups on small tables). */
export function readStreamState(streamId: string): SqlQuery {
  return {
    text: `SELECT coalesce((SELECT version FROM ${TABLES.streams} WHERE stream_id = $1), 0)::text AS version,
                  coalesce(st.state, 'live') AS state, coalesce(st.deleted_through, 0)::text AS deleted_through,
                  st.max_age::text AS max_age, st.max_count::text AS max_count,
                  st.truncate_before::text AS truncate_before, st.custom,
                  coalesce(st.metadata_version, 0)::text AS metadata_version
           FROM (SELECT 1) one LEFT JOIN ${TABLES.streamStates} st ON st.stream_id = $1`,
    values: [streamId],
  };
}

/** A category's retention rule as `readCategoryRule` returns it (no row: none). */
export type CategoryRuleRow = Pick<
  StreamStateRow,
  'max_age' | 'max_count' | 'truncate_before' | 'custom' | 'metadata_version'
>;

/** A category's rule, or no row. */
export function readCategoryRule(category: string): SqlQuery {
  return {
    text: `SELECT max_age::text AS max_age, max_count::text AS max_count,
                  truncate_before::text AS truncate_before, custom, metadata_version::text AS metadata_version
           FROM ${TABLES.categoryRules} WHERE category = $1`,
    values: [category],
  };
}

/** Settings a metadata write stores (null: not set). */
export interface MetadataValues {
  maxAge: number | null;
  maxCount: number | null;
  truncateBefore: number | null;
  custom: string | null;
}

/**
 * Replaces a stream's metadata if its metadata version is `expected` (null: any), unless the
 * stream is tombstoned. Returns the row as it now is (`written` false when nothing changed:
 * the caller reads why).
 */
export function writeStreamMetadata(
  streamId: string,
  values: MetadataValues,
  expected: number | null,
): SqlQuery {
  return {
    text: `WITH current AS (
             SELECT coalesce((SELECT state FROM ${TABLES.streamStates} WHERE stream_id = $1), 'live') AS state,
                    coalesce((SELECT metadata_version FROM ${TABLES.streamStates} WHERE stream_id = $1), 0) AS version
           ), written AS (
             INSERT INTO ${TABLES.streamStates} AS s (stream_id, max_age, max_count, truncate_before, custom, metadata_version)
             SELECT $1, $2, $3, $4, $5::jsonb, current.version + 1 FROM current
             WHERE current.state <> 'tombstoned' AND ($6::bigint IS NULL OR current.version = $6::bigint)
             ON CONFLICT (stream_id) DO UPDATE
               SET max_age = excluded.max_age, max_count = excluded.max_count,
                   truncate_before = excluded.truncate_before, custom = excluded.custom,
                   metadata_version = s.metadata_version + 1, updated_at = now()
               WHERE s.state <> 'tombstoned' AND ($6::bigint IS NULL OR s.metadata_version = $6::bigint)
             RETURNING metadata_version
           )
           SELECT (SELECT state FROM current) AS state, (SELECT version FROM current)::text AS current,
                  (SELECT metadata_version FROM written)::text AS written`,
    values: [
      streamId,
      values.maxAge,
      values.maxCount,
      values.truncateBefore,
      values.custom,
      expected,
    ],
  };
}

/** Replaces a category's rule if its metadata version is `expected` (null: any). */
export function writeCategoryRule(
  category: string,
  values: MetadataValues,
  expected: number | null,
): SqlQuery {
  return {
    text: `WITH current AS (
             SELECT coalesce((SELECT metadata_version FROM ${TABLES.categoryRules} WHERE category = $1), 0) AS version
           ), written AS (
             INSERT INTO ${TABLES.categoryRules} AS c (category, max_age, max_count, truncate_before, custom, metadata_version)
             SELECT $1, $2, $3, $4, $5::jsonb, current.version + 1 FROM current
             WHERE $6::bigint IS NULL OR current.version = $6::bigint
             ON CONFLICT (category) DO UPDATE
               SET max_age = excluded.max_age, max_count = excluded.max_count,
                   truncate_before = excluded.truncate_before, custom = excluded.custom,
                   metadata_version = c.metadata_version + 1, updated_at = now()
               WHERE $6::bigint IS NULL OR c.metadata_version = $6::bigint
             RETURNING metadata_version
           )
           SELECT 'live' AS state, (SELECT version FROM current)::text AS current,
                  (SELECT metadata_version FROM written)::text AS written`,
    values: [
      category,
      values.maxAge,
      values.maxCount,
      values.truncateBefore,
      values.custom,
      expected,
    ],
  };
}

/** Deletes a stream's snapshots up to `version` (those of its deleted versions). */
export function deleteSnapshots(streamId: string, version: number): SqlQuery {
  return {
    text: `DELETE FROM ${ES_TABLES.snapshots} WHERE stream_id = $1 AND version <= $2`,
    values: [streamId, version],
  };
}
