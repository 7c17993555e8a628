import type { SqlQuery } from '@ordinal/pg';
import { AMQP_TABLES } from '../amqp.constants.js';

/**
 * Sets the interface's bookmark to `position`, backwards too (an operator's rewind; the
 * interface's own saves only move it forward). Creates the row for an interface that has none.
 * Its late watch resumes from the earlier of what it owed and now: what it owed still covers
 * every position below the old bookmark; positions a forward move jumps over count from the
 * rewind, as every rewind counted before (LEAST takes now() for `infinity` and for a null).
 */
export function setBookmark(name: string, position: number): SqlQuery {
  return {
    text: `INSERT INTO ${AMQP_TABLES.bookmarks} (name, position, late_owed_since) VALUES ($1, $2, now())
           ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position, updated_at = now(),
             late_owed_since = LEAST(${AMQP_TABLES.bookmarks}.late_owed_since, now())`,
    values: [name, position],
  };
}
