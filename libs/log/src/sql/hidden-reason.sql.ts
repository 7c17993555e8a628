import { TABLES } from '../log.constants.js';

/**
 * Why the row of `table` (a messages row, named by its table or alias) reads back as a
 * tombstone, as SQL text: NULL for a message, else `'deleted'`, `'truncated'`, `'expired'` or
 * `'scavenged'` (docs/lifecycle.md). The one definition every reader and the scavenge use.
 *
 * A row of a deleted tenant (docs/tenants.md#deleting-a-tenant) is `'deleted'`, first of all
 * (even once a scavenge erased it: the tenant's deletion is why). A row of no tenant pays only
 * the `tenant IS NOT NULL` test for it.
 *
 * A row outside any stream is never hidden, and costs nothing more than that test (most of a
 * log). A stream row looks its stream up in `stream_states` and its category in
 * `category_rules` (small tables: only streams with a lifecycle have a row there); a stream's
 * own setting wins over its category's. `maxCount` reads the stream's head from `streams` only
 * when a count is set. A `maxAge` is compared with the row's age in seconds: no timestamp is
 * worked out from it (`now()` less a huge `maxAge` is out of range), so any stored value reads.
 */
export function hiddenReason(table: string = TABLES.messages): string {
  if (!/^[a-z_]+$/.test(table)) throw new TypeError(`Bad table alias ${table}`);
  const m = table;
  return `CASE WHEN ${m}.tenant IS NOT NULL AND EXISTS (SELECT 1 FROM ${TABLES.deletedTenants} d WHERE d.tenant = ${m}.tenant) THEN 'deleted'
    WHEN ${m}.erased IS NOT NULL THEN 'scavenged'
    WHEN ${m}.stream_id IS NULL THEN NULL
    ELSE (SELECT CASE
        WHEN st.state = 'tombstoned' OR ${m}.stream_version <= st.deleted_through THEN 'deleted'
        WHEN ${m}.stream_version < coalesce(st.truncate_before, cr.truncate_before) THEN 'truncated'
        WHEN coalesce(st.max_count, cr.max_count) IS NOT NULL
          AND ${m}.stream_version <= (SELECT h.version FROM ${TABLES.streams} h WHERE h.stream_id = ${m}.stream_id)
                                     - coalesce(st.max_count, cr.max_count) THEN 'truncated'
        WHEN coalesce(st.max_age, cr.max_age) IS NOT NULL
          AND extract(epoch FROM now() - ${m}.created_at) > coalesce(st.max_age, cr.max_age) THEN 'expired'
      END
      FROM (SELECT 1) one
      LEFT JOIN ${TABLES.streamStates} st ON st.stream_id = ${m}.stream_id
      LEFT JOIN ${TABLES.categoryRules} cr ON cr.category = ${m}.category)
  END`;
}

/** `hiddenReason()` of the messages table, built once (prepared statements depend on the text). */
export const HIDDEN_REASON = hiddenReason();
