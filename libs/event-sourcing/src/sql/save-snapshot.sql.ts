import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';
import { ES_TABLES } from '../event-sourcing.constants.js';

/** The row `saveSnapshot` returns: `created_at` is null when the stream is behind `version`. */
export interface SaveSnapshotRow {
  current: string;
  created_at: Date | string | null;
}

/**
 * Stores a snapshot only if the stream has reached `version` (checked in the same statement;
 * a stream's version only grows, so the check cannot go stale). Same version again replaces.
 */
export function saveSnapshot(
  streamId: string,
  version: number,
  stateJson: string,
  schemaVersion: number,
): SqlQuery {
  return {
    text: `WITH head AS (
             SELECT coalesce((SELECT version FROM ${TABLES.streams} WHERE stream_id = $1), 0) AS version
           ), saved AS (
             INSERT INTO ${ES_TABLES.snapshots} (stream_id, version, state, schema_version)
             SELECT $1, $2, $3::jsonb, $4 FROM head WHERE head.version >= $2
             ON CONFLICT (stream_id, version) DO UPDATE
               SET state = excluded.state, schema_version = excluded.schema_version, created_at = now()
             RETURNING created_at
           )
           SELECT (SELECT version FROM head)::text AS current, (SELECT created_at FROM saved) AS created_at`,
    values: [streamId, version, stateJson, schemaVersion],
  };
}
