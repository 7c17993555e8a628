import type { SqlQuery } from '@ordinal/pg';

/**
 * Concurrent mode: assigns the transaction its id first (so readers can see it as a writer
 * that may still fill a hole), then takes the categories' advisory locks in the given
 * (sorted) order. Returns the commit time.
 */
export function lockCategories(sortedKeys: string[]): SqlQuery {
  return { text: LOCK_CATEGORIES.replaceAll('$2', '$1'), values: [sortedKeys] };
}

/**
 * The select of `lockCategories`, with the keys in `$2` (shared with the one-statement
 * flush, `appendConcurrent`, whose `$1` is the rows). The target list runs left to right:
 * the id is assigned before the first lock is waited for.
 */
export const LOCK_CATEGORIES = `SELECT pg_current_xact_id()::text AS xid,
             (SELECT count(pg_advisory_xact_lock(k)) FROM unnest($2::bigint[]) WITH ORDINALITY AS t(k, o)) AS locks,
             now() AS now`;
