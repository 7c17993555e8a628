import { LOCKS, PASSED_SEQUENCE, SEQUENCE, TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/** The highest position a watermark passed (0 before any). */
const PASSED = `coalesce(pg_sequence_last_value('${PASSED_SEQUENCE}'), 0)`;

/**
 * At start, after a change of ordering mode: gapless mode's head must not be behind rows a
 * concurrent writer added, and the sequence must not hand out positions gapless mode used.
 * Neither may hand out a position a concurrent watermark passed (readers have gone by it, and
 * the `messages_index_passed` trigger would refuse the row).
 */
export function alignPositions(ordering: 'gapless' | 'concurrent'): SqlQuery {
  if (ordering === 'gapless') {
    return {
      text: `WITH lock AS (SELECT pg_advisory_xact_lock($1::bigint)),
                  top AS (SELECT greatest(coalesce(max(index), 0), ${PASSED}) AS m FROM ${TABLES.messages})
             UPDATE ${TABLES.logHead} h SET position = top.m FROM top, lock WHERE h.id = 1 AND h.position < top.m RETURNING h.position`,
      values: [LOCKS.log],
    };
  }
  // The next position the sequence hands out is last_value + 1 once called, last_value itself
  // before (a fresh sequence: 1, not called): move it when that position is already used.
  return {
    text: `SELECT setval('${SEQUENCE}', top.m)
           FROM (SELECT nullif(greatest(coalesce(max(index), 0), ${PASSED}), 0) AS m FROM ${TABLES.messages}) top, ${SEQUENCE} s
           WHERE top.m IS NOT NULL AND top.m >= CASE WHEN s.is_called THEN s.last_value + 1 ELSE s.last_value END`,
    values: [],
  };
}
