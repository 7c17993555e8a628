import { LOCKS, TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/**
 * Takes the global log lock for this transaction (gapless mode, L3) and reads the head.
 * The advisory lock is the documented serialisation point; the `log_head` row lock (FOR
 * UPDATE) is what single-statement flushes take, so both kinds of flush exclude each other.
 * After waiting, FOR UPDATE returns the newest committed head.
 */
export function lockLog(): SqlQuery {
  return {
    text: `WITH lock AS (SELECT pg_advisory_xact_lock($1::bigint))
           SELECT h.position::text AS head, now() AS now FROM ${TABLES.logHead} h, lock WHERE h.id = 1 FOR UPDATE OF h`,
    values: [LOCKS.log],
  };
}
