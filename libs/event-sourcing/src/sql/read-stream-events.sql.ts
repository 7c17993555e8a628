import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';
import { streamEventJson } from './stream-event-json.js';
import { streamWindow } from './stream-window.sql.js';

/** The row `readStreamEvents` returns: one JSON array holding the page. */
export interface StreamPageRow {
  events: unknown[];
}

/**
 * One page of a stream: `afterVersion < stream_version <= toVersion`, in version order, at
 * most `limit` events (an index range scan on (stream_id, stream_version)), as one JSON value;
 * only versions in the stream's window (`streamWindow`), none of a deleted stream.
 */
export function readStreamEvents(
  streamId: string,
  category: string,
  afterVersion: number,
  toVersion: number,
  limit: number,
  details: boolean,
): SqlQuery {
  return {
    text: `WITH ${streamWindow('$5')}
           SELECT coalesce(json_agg(${streamEventJson(details)} ORDER BY stream_version), '[]'::json) AS events
           FROM (SELECT * FROM ${TABLES.messages}
                 WHERE stream_id = $1 AND stream_version > greatest($2::bigint, (SELECT first FROM visible) - 1)
                   AND stream_version <= $3 AND (SELECT state FROM rules) = 'live' AND erased IS NULL
                 ORDER BY stream_version LIMIT $4) AS page`,
    values: [streamId, afterVersion, toVersion, limit, category],
  };
}
