import type { SqlQuery } from '@ordinal/pg';
import { AMQP_TABLES } from '../amqp.constants.js';

/** Moves the interface's bookmark forward to `position` (never backwards). */
export function saveBookmark(name: string, position: number): SqlQuery {
  return {
    text: `UPDATE ${AMQP_TABLES.bookmarks} SET position = $2, updated_at = now()
           WHERE name = $1 AND position < $2`,
    values: [name, position],
  };
}
