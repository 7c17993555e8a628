import type { SqlQuery } from './sql-query.js';

/**
 * Concurrent mode: assigns the transaction its id first (so readers can see it as a writer
 * that may still fill a hole), then takes the categories' advisory locks in the given
 * (sorted) order. Returns the commit time.
 */
export function lockCategories(sortedKeys: string[]): SqlQuery {
  return {
    text: `SELECT pg_current_xact_id()::text AS xid,
             (SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) WITH ORDINALITY AS t(k, o)) AS locks,
             now() AS now`,
    values: [sortedKeys],
  };
}
