import type { SqlQuery } from '@ordinal/pg';
import { AMQP_TABLES } from '../amqp.constants.js';
import { owedParameter } from './read-bookmark.sql.js';

/**
 * Moves the interface's bookmark forward to `position` (never backwards), with the earliest
 * time its feed still owes a late arrival at or below it from (null: none).
 */
export function saveBookmark(name: string, position: number, owedSince: Date | null): SqlQuery {
  return {
    text: `UPDATE ${AMQP_TABLES.bookmarks} SET position = $2, updated_at = now(), late_owed_since = ${owedParameter('$3')}
           WHERE name = $1 AND position < $2`,
    values: [name, position, owedSince],
  };
}
