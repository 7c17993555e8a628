import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consumer groups (docs/consumer-groups.md), all their state in PostgreSQL so that any server
 * process serves any member:
 * - `consumer_groups`: the definition, the checkpoint (every index at or below it is done) and
 *   `read_to` (the log is read into deliveries up to there; checkpoint <= read_to).
 * - `consumer_group_members`: one row per member with its lease epoch and expiry; a member whose
 *   lease expired is dead (what it held goes back to the group) and keeps its row, so its old
 *   epoch stays refused when it comes back (with epoch + 1).
 * - `consumer_group_deliveries`: each matching event above the checkpoint not yet done (or a
 *   late arrival / replayed parked event below it): ready (member_id null) or in flight to
 *   (member_id, epoch) until `deadline`. Acknowledged, skipped and parked events are deleted.
 * - `consumer_group_parked`: references to parked events (index, reason, attempts).
 * - `consumer_group_watch`: positions the group passed without a row, watched for late arrivals.
 */
export class CreateConsumerGroups1765200000100 implements MigrationInterface {
  name = 'CreateConsumerGroups1765200000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE consumer_groups (
      name text PRIMARY KEY,
      definition jsonb NOT NULL,
      checkpoint bigint NOT NULL,
      read_to bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE TABLE consumer_group_members (
      group_name text NOT NULL REFERENCES consumer_groups (name) ON DELETE CASCADE,
      member_id text NOT NULL,
      epoch bigint NOT NULL,
      lease_expires_at timestamptz NOT NULL,
      server text NOT NULL,
      joined_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (group_name, member_id)
    )`);
    await queryRunner.query(`CREATE TABLE consumer_group_deliveries (
      group_name text NOT NULL REFERENCES consumer_groups (name) ON DELETE CASCADE,
      index bigint NOT NULL,
      key text,
      member_id text,
      epoch bigint,
      attempt integer NOT NULL DEFAULT 0,
      failures integer NOT NULL DEFAULT 0,
      deadline timestamptz,
      late boolean NOT NULL DEFAULT false,
      last_error text,
      PRIMARY KEY (group_name, index)
    )`);
    await queryRunner.query(
      'CREATE INDEX consumer_group_deliveries_member_ix ON consumer_group_deliveries (group_name, member_id) WHERE member_id IS NOT NULL',
    );
    await queryRunner.query(
      'CREATE INDEX consumer_group_deliveries_key_ix ON consumer_group_deliveries (group_name, key, index) WHERE key IS NOT NULL',
    );
    await queryRunner.query(`CREATE TABLE consumer_group_parked (
      group_name text NOT NULL REFERENCES consumer_groups (name) ON DELETE CASCADE,
      index bigint NOT NULL,
      reason text NOT NULL,
      attempts integer NOT NULL,
      parked_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (group_name, index)
    )`);
    await queryRunner.query(`CREATE TABLE consumer_group_watch (
      group_name text NOT NULL REFERENCES consumer_groups (name) ON DELETE CASCADE,
      position bigint NOT NULL,
      passed_xmax text NOT NULL,
      PRIMARY KEY (group_name, position)
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['watch', 'parked', 'deliveries', 'members'])
      await queryRunner.query(`DROP TABLE consumer_group_${table}`);
    await queryRunner.query('DROP TABLE consumer_groups');
  }
}
