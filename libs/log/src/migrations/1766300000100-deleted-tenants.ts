import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, type TableDescription } from '@ordinal/pg';
import { TENANT_ROLE } from '../tenant.js';

const TABLES: Record<string, TableDescription> = {
  deleted_tenants: {
    comment:
      'Tenants deleted (docs/tenants.md#deleting-a-tenant): every position of a tenant named here reads back as a deleted tombstone, its appends are refused (tenant_deleted), a scavenge erases its rows, and its subjects’ personal-data keys are destroyed. A row is never removed: it is the tenant’s erasure ledger, reapplied at every start.',
    columns: {
      tenant: 'The deleted tenant id.',
      deleted_at: 'When the deletion committed.',
      deleted_by: 'Who deleted it (the principal of the admin request, or the caller’s name).',
      reason: 'The reason given with the deletion (may be empty).',
      through_index: 'The log’s head when the deletion committed: the tenant has no row above it.',
      marker_index: 'Index of the $tenant-deleted marker (NULL until it is appended).',
      keys_destroyed:
        'How many subjects’ personal-data keys the deletion destroyed (its first run).',
      scavenged_at:
        'When a scavenge had erased every row of the tenant, in the table and in archived segments (NULL before).',
    },
  },
};

/**
 * Deleting a tenant (docs/tenants.md#deleting-a-tenant): the `deleted_tenants` table, which
 * `hiddenReason()` consults for every row of a tenant (a row of no tenant pays only its
 * `tenant IS NOT NULL` test), and a trigger sending the lifecycle notice on it like
 * `stream_states`' (`ordinal_notify_lifecycle`, LifecycleNotice1765500000010): live routers
 * drop the catch-up pages they keep (not for the bookkeeping a deletion updates after: its
 * marker's index, its keys' count, its scavenge). The role `ordinal_tenant` reads it (its reads compute
 * tombstones), granted when the role exists.
 */
export class DeletedTenants1766300000100 implements MigrationInterface {
  name = 'DeletedTenants1766300000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE deleted_tenants (
      tenant text PRIMARY KEY,
      deleted_at timestamptz NOT NULL DEFAULT now(),
      deleted_by text NOT NULL,
      reason text NOT NULL DEFAULT '',
      through_index bigint NOT NULL,
      marker_index bigint,
      keys_destroyed bigint NOT NULL DEFAULT 0,
      scavenged_at timestamptz)`);
    await describeSchema(queryRunner, TABLES);
    await queryRunner.query(
      `CREATE TRIGGER deleted_tenants_notify AFTER INSERT OR DELETE OR UPDATE OF tenant ON deleted_tenants
       FOR EACH STATEMENT EXECUTE FUNCTION ordinal_notify_lifecycle()`,
    );
    const exists = (await queryRunner.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [
      TENANT_ROLE,
    ])) as unknown[];
    if (exists.length > 0)
      await queryRunner.query(`GRANT SELECT ON deleted_tenants TO ${TENANT_ROLE}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE deleted_tenants`);
  }
}
