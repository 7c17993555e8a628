import type { SqlQuery } from '@ordinal/pg';
import { AMQP_TABLES } from '../amqp.constants.js';

/**
 * `late_owed_since` holds the earliest time the interface's feed still owed a late arrival
 * from when the bookmark was saved (`LogFeed.arrivedSince`). It is read back as
 * `arrived_since`, what the next run's feed takes as `watchAbandonedBelow.arrivedSince`.
 * "Owes none" cannot be a null: null is what every row written before the column existed
 * holds, and those must fall back to `updated_at` (the time of the save, as they resumed
 * before). So owing none is stored as `infinity` (no claim is stamped at or after it: exactly
 * "none"), and read back as null.
 */
export const BOOKMARK_ARRIVED_SINCE = `CASE WHEN late_owed_since IS NULL THEN updated_at
       WHEN late_owed_since = 'infinity' THEN NULL ELSE late_owed_since END`;

/** What a save writes into `late_owed_since` from its parameter (a time, or null: owes none). */
export const owedParameter = (parameter: string) =>
  `COALESCE(${parameter}::timestamptz, 'infinity')`;

/**
 * Creates the interface's bookmark at 0 if it has none (owing nothing: nothing is below it),
 * and returns its position and what its late watch resumes from.
 */
export function readBookmark(name: string): SqlQuery {
  return {
    text: `WITH created AS (
             INSERT INTO ${AMQP_TABLES.bookmarks} (name, position, late_owed_since) VALUES ($1, 0, 'infinity')
             ON CONFLICT (name) DO NOTHING
             RETURNING position, ${BOOKMARK_ARRIVED_SINCE} AS arrived_since
           )
           SELECT position::text AS position, arrived_since FROM created
           UNION ALL
           SELECT position::text, ${BOOKMARK_ARRIVED_SINCE} FROM ${AMQP_TABLES.bookmarks} WHERE name = $1`,
    values: [name],
  };
}
