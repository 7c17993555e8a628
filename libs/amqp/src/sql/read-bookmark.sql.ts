import type { SqlQuery } from '@ordinal/pg';
import { AMQP_TABLES } from '../amqp.constants.js';

/** Creates the interface's bookmark at 0 if it has none, and returns its position. */
export function readBookmark(name: string): SqlQuery {
  return {
    text: `WITH created AS (
             INSERT INTO ${AMQP_TABLES.bookmarks} (name, position) VALUES ($1, 0)
             ON CONFLICT (name) DO NOTHING
             RETURNING position, updated_at
           )
           SELECT position::text AS position, updated_at FROM created
           UNION ALL
           SELECT position::text, updated_at FROM ${AMQP_TABLES.bookmarks} WHERE name = $1`,
    values: [name],
  };
}
