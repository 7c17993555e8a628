import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';

/** One row of `listStreams`. */
export interface StreamListRow {
  stream_id: string;
  version: string;
  updated_at: Date;
}

/**
 * Streams from the heads table in id order, after `after` (exclusive; null from the first),
 * only those whose id starts with `prefix` (null for all): a walk of the primary key, at most
 * `limit` rows. `starts_with`, not LIKE: `_` is a stream id character and LIKE's wildcard.
 */
export function listStreams(prefix: string | null, after: string | null, limit: number): SqlQuery {
  return {
    text: `SELECT stream_id, version::text AS version, updated_at
             FROM ${TABLES.streams}
            WHERE ($1::text IS NULL OR starts_with(stream_id, $1))
              AND ($2::text IS NULL OR stream_id > $2)
            ORDER BY stream_id
            LIMIT $3`,
    values: [prefix, after, limit],
  };
}
