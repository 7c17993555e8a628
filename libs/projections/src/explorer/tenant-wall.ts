import { TENANT_ROLE, TENANT_SETTING } from '@ordinal/log';
import type { EntityManager } from 'typeorm';

/** The role and tenant setting the transaction had before a handler went behind the wall. */
interface Saved {
  role: string;
  tenant: string;
}

/**
 * Runs `fn` (one event's handlers) inside the batch's transaction as the role `ordinal_tenant`
 * with `ordinal.tenant` naming `tenant` (docs/tenants.md): PostgreSQL's row-level security
 * then shows the handler only that tenant's rows of every table behind the wall, and refuses a
 * row of another tenant it writes (the policy's check). Once `fn` succeeded the role and
 * setting go back to what they were, so what follows in the transaction (the next event, the
 * lease's fence, the checkpoint) runs as before. When `fn` fails the transaction rolls back,
 * and the settings with it (both are set for the transaction only).
 */
export async function behindTenantWall<T>(
  manager: EntityManager,
  tenant: string,
  fn: () => Promise<T>,
): Promise<T> {
  // The MATERIALIZED CTE reads the settings before the outer row's set_config calls run.
  const [saved] = await manager.query<Saved[]>(
    `WITH saved AS MATERIALIZED (
       SELECT current_setting('role') AS role, coalesce(current_setting($1, true), '') AS tenant)
     SELECT saved.role, saved.tenant, set_config('role', $2, true), set_config($1, $3, true)
       FROM saved`,
    [TENANT_SETTING, TENANT_ROLE, tenant],
  );
  const result = await fn();
  await manager.query(`SELECT set_config('role', $1, true), set_config($2, $3, true)`, [
    saved.role,
    TENANT_SETTING,
    saved.tenant,
  ]);
  return result;
}
