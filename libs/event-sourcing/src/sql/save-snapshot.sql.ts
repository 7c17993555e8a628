import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';
import { ES_TABLES } from '../event-sourcing.constants.js';

/** The row `saveSnapshot` returns: `created_at` is null when the stream is behind `version`. */
export interface SaveSnapshotRow {
  current: string;
  /** The stream's lifecycle state: nothing is saved unless `live`. */
  state: 'live' | 'deleted' | 'tombstoned';
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
             SELECT coalesce((SELECT version FROM ${TABLES.streams} WHERE stream_id = $1), 0) AS version,
                    coalesce((SELECT state FROM ${TABLES.streamStates} WHERE stream_id = $1), 'live') AS state
           ), saved AS (
             INSERT INTO ${ES_TABLES.snapshots} (stream_id, version, state, schema_version)
             SELECT $1, $2, $3::jsonb, $4 FROM head WHERE head.version >= $2 AND head.state = 'live'
             ON CONFLICT (stream_id, version) DO UPDATE
               SET state = excluded.state, schema_version = excluded.schema_version, created_at = now()
             RETURNING created_at
           )
           SELECT (SELECT version FROM head)::text AS current, (SELECT state FROM head) AS state,
                  (SELECT created_at FROM saved) AS created_at`,
    values: [streamId, version, stateJson, schemaVersion],
  };
}
