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

/**
 * `lockCategories`, then the tenants' advisory locks shared (`tenantLockKey`, sorted): a
 * concurrent flush of tenants' messages, so that a tenant's deletion (which takes its lock
 * exclusive) waits for it, and it for the deletion, before the flush reads the tenant's state.
 */
export function lockCategoriesAndTenants(sortedKeys: string[], tenantKeys: string[]): SqlQuery {
  return {
    text: `SELECT pg_current_xact_id()::text AS xid,
             (SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) WITH ORDINALITY AS t(k, o)) AS locks,
             (SELECT count(pg_advisory_xact_lock_shared(k)) FROM unnest($2::bigint[]) WITH ORDINALITY AS t(k, o)) AS tenant_locks,
             now() AS now`,
    values: [sortedKeys, tenantKeys],
  };
}
