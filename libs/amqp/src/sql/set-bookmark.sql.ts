import type { SqlQuery } from '@ordinal/pg';
import { AMQP_TABLES } from '../amqp.constants.js';

/**
 * Sets the interface's bookmark to `position`, backwards too (an operator's rewind; the
 * interface's own saves only move it forward). Creates the row for an interface that has none.
 */
export function setBookmark(name: string, position: number): SqlQuery {
  return {
    text: `INSERT INTO ${AMQP_TABLES.bookmarks} (name, position) VALUES ($1, $2)
           ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position, updated_at = now()`,
    values: [name, position],
  };
}
