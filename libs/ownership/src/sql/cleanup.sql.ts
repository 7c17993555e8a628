import type { SqlQuery } from '@ordinal/pg';
import { OWNERSHIP_TABLES } from '../ownership.constants.js';

/**
 * Forgets processes that died (no heartbeat for `afterMs`): their process rows go, and the
 * leases they still name (expired as long) lose their owner, so reports and `ordinal status`
 * do not list long-dead processes. Safe at any time: a lease expired that long ago can be
 * neither renewed nor fenced by its old owner (both need `expires_at` in the future), and a
 * process that was only frozen writes its row again at its next heartbeat.
 */
export function forgetDeadProcesses(afterMs: number): SqlQuery {
  return {
    text: `WITH gone AS (
             DELETE FROM ${OWNERSHIP_TABLES.processes}
              WHERE expires_at < clock_timestamp() - $1::int * interval '1 millisecond'
             RETURNING owner)
           UPDATE ${OWNERSHIP_TABLES.leases} SET owner = NULL, expires_at = NULL
            WHERE owner IS NOT NULL AND expires_at < clock_timestamp() - $1::int * interval '1 millisecond'
           RETURNING name, (SELECT count(*)::int FROM gone) AS processes`,
    values: [afterMs],
  };
}
