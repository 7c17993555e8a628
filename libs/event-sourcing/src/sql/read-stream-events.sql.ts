import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';
import { streamEventJson } from './stream-event-json.js';

/** The row `readStreamEvents` returns: one JSON array holding the page. */
export interface StreamPageRow {
  events: unknown[];
}

/**
 * One page of a stream: `afterVersion < stream_version <= toVersion`, in version order, at
 * most `limit` events (an index range scan on (stream_id, stream_version)), as one JSON value.
 */
export function readStreamEvents(
  streamId: string,
  afterVersion: number,
  toVersion: number,
  limit: number,
  details: boolean,
): SqlQuery {
  return {
    text: `SELECT coalesce(json_agg(${streamEventJson(details)} ORDER BY stream_version), '[]'::json) AS events
           FROM (SELECT * FROM ${TABLES.messages}
                 WHERE stream_id = $1 AND stream_version > $2 AND stream_version <= $3
                 ORDER BY stream_version LIMIT $4) AS page`,
    values: [streamId, afterVersion, toVersion, limit],
  };
}
