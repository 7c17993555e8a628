import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';
import { ES_TABLES } from '../event-sourcing.constants.js';
import { streamEventJson } from './stream-event-json.js';
import { streamWindow, STREAM_WINDOW_COLUMNS, type StreamWindowRow } from './stream-window.sql.js';

/** The row `readStreamSlice` returns. */
export interface StreamSliceRow extends StreamWindowRow {
  version: string;
  snapshot_version: string | null;
  snapshot_state: unknown;
  snapshot_schema_version: number | null;
  snapshot_created_at: Date | string | null;
  events: unknown[];
}

/**
 * The start of a stream read in one round trip: the stream's version (heads table), its newest
 * snapshot at a version >= `fromVersion` (unless `withSnapshot` is false), and the first page
 * of events after that snapshot (or from `fromVersion`) up to the version.
 *
 * `knownSnapshot` (a tenant's read, behind row-level security, whose role does not read the
 * snapshots table): the version of the newest snapshot >= `fromVersion`, read apart (null:
 * none), used if the window allows it; the row then has its version only (`snapshot_state`,
 * `snapshot_schema_version` and `snapshot_created_at` null: the caller has them).
 */
export function readStreamSlice(
  streamId: string,
  category: string,
  fromVersion: number,
  withSnapshot: boolean,
  limit: number,
  details: boolean,
  knownSnapshot?: number | null,
): SqlQuery {
  // Only versions in the window are read (a snapshot taken before a delete is never used);
  // an erased row outside it (a rule relaxed after a scavenge) is never handed out either.
  const known = knownSnapshot !== undefined;
  const snapshots = known
    ? `(SELECT $6::bigint AS version, NULL::jsonb AS state, NULL::integer AS schema_version,
               NULL::timestamptz AS created_at) AS known`
    : ES_TABLES.snapshots;
  return {
    text: `WITH ${streamWindow('$5')}, snap AS (
             SELECT version, state, schema_version, created_at FROM ${snapshots}
             WHERE $3::boolean AND ${known ? 'version IS NOT NULL' : 'stream_id = $1'} AND version >= $2
               AND version > (SELECT deleted_through FROM rules) AND (SELECT state FROM rules) = 'live'
             ORDER BY version DESC LIMIT 1
           ), page AS (
             SELECT * FROM ${TABLES.messages}
             WHERE stream_id = $1
               AND stream_version > coalesce((SELECT version FROM snap), greatest($2::bigint, (SELECT first FROM visible)) - 1)
               AND stream_version <= (SELECT version FROM head)
               AND (SELECT state FROM rules) = 'live' AND erased IS NULL
             ORDER BY stream_version LIMIT $4
           )
           SELECT ${STREAM_WINDOW_COLUMNS},
                  head.version::text AS version, snap.version::text AS snapshot_version, snap.state AS snapshot_state,
                  snap.schema_version AS snapshot_schema_version, snap.created_at AS snapshot_created_at,
                  (SELECT coalesce(json_agg(${streamEventJson(details)} ORDER BY stream_version), '[]'::json) FROM page) AS events
           FROM head LEFT JOIN snap ON true`,
    values: [
      streamId,
      fromVersion,
      withSnapshot,
      limit,
      category,
      ...(known ? [knownSnapshot] : []),
    ],
  };
}
