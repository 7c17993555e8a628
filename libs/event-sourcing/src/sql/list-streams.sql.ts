import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';

/** The category of a heads row's stream, without its tenant's qualifier (a stream id has no `/`). */
const PLAIN_CATEGORY = `split_part(substr(stream_id, strpos(stream_id, '/') + 1), '-', 1)`;

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
 * `categories` (LIKE patterns over the category, the text before the first `-`; null for all)
 * and `exceptCategories` leave streams out where they are read, so a page of what a reader may
 * see ends on a stream it may see. A tenant's stream (stored `<tenant>/<id>`, docs/tenants.md)
 * is matched by its plain category (`order` for `acme/order-1`).
 */
export function listStreams(
  prefix: string | null,
  after: string | null,
  limit: number,
  categories: readonly string[] | null = null,
  exceptCategories: readonly string[] | null = null,
): SqlQuery {
  return {
    text: `SELECT stream_id, version::text AS version, updated_at
             FROM ${TABLES.streams}
            WHERE ($1::text IS NULL OR starts_with(stream_id, $1))
              AND ($2::text IS NULL OR stream_id > $2)
              AND ($4::text[] IS NULL OR ${PLAIN_CATEGORY} LIKE ANY ($4::text[]))
              AND ($5::text[] IS NULL OR ${PLAIN_CATEGORY} <> ALL ($5::text[]))
            ORDER BY stream_id
            LIMIT $3`,
    values: [prefix, after, limit, categories, exceptCategories],
  };
}
