import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CREATE_TENANT_ROLE, TENANT_ROLE, tenantPredicate } from '../tenant.js';

/**
 * Tenants (docs/tenants.md): a `tenant` column on the log (nullable, no default: no rewrite of
 * the table), an index for one tenant's feed, and row-level security as a second wall: a
 * session naming a tenant (`ordinal.tenant`) reads only that tenant's rows, and the role
 * `ordinal_tenant` (which the server's reads for a tenant switch to) reads nothing else. The
 * tables a read joins besides the log are readable by that role; partitions are not (a tenant's
 * session reads the log through `messages`, where the policy applies).
 *
 * The index is built on every segment in this migration's transaction: it reads each segment
 * once and holds writes meanwhile; it holds no row of a log written before tenants (all NULL).
 */
export class Tenants1766300000000 implements MigrationInterface {
  name = 'Tenants1766300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ADD COLUMN tenant text`);
    await queryRunner.query(
      `COMMENT ON COLUMN messages.tenant IS 'The tenant the message belongs to (NULL: none). A tenant''s stream_id, category and idempotency_key are stored qualified: <tenant>/<name>.'`,
    );
    // The segments that exist get the column's comment too (new ones copy it: LIKE … INCLUDING COMMENTS).
    const segments = (await queryRunner.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'messages'::regclass`,
    )) as { name: string }[];
    for (const { name } of segments) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Unexpected segment name ${name}`);
      await queryRunner.query(
        `COMMENT ON COLUMN ${name}.tenant IS 'The tenant the message belongs to (NULL: none). A tenant''s stream_id, category and idempotency_key are stored qualified: <tenant>/<name>.'`,
      );
    }
    await queryRunner.query(
      `CREATE INDEX messages_tenant_index_ix ON messages (tenant, index) WHERE tenant IS NOT NULL`,
    );
    await queryRunner.query(CREATE_TENANT_ROLE);
    await queryRunner.query(`ALTER TABLE messages ENABLE ROW LEVEL SECURITY`);
    await queryRunner.query(
      `CREATE POLICY messages_tenant_isolation ON messages USING (${tenantPredicate()})`,
    );
    await queryRunner.query(
      `COMMENT ON POLICY messages_tenant_isolation ON messages IS 'A session naming a tenant (ordinal.tenant) sees only its rows; the role ordinal_tenant sees none without one.'`,
    );
    const exists = (await queryRunner.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [
      TENANT_ROLE,
    ])) as unknown[];
    if (exists.length === 0) return;
    await queryRunner.query(
      `GRANT SELECT ON messages, streams, stream_states, category_rules, log_segments, archived_stream_chunks TO ${TENANT_ROLE}`,
    );
    // The server switches to the role for a tenant's reads: a user that is not a superuser
    // needs to be a member (granted if this user may; else the server reads without the wall).
    await queryRunner.query(`DO $do$
      BEGIN
        IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
           AND NOT pg_has_role(current_user, '${TENANT_ROLE}', 'MEMBER') THEN
          GRANT ${TENANT_ROLE} TO CURRENT_USER;
        END IF;
      EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'ordinal: no privilege to grant ${TENANT_ROLE} to %', current_user;
      END
    $do$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP POLICY messages_tenant_isolation ON messages`);
    await queryRunner.query(`ALTER TABLE messages DISABLE ROW LEVEL SECURITY`);
    await queryRunner.query(`DROP INDEX messages_tenant_index_ix`);
    await queryRunner.query(`ALTER TABLE messages DROP COLUMN tenant`);
  }
}
