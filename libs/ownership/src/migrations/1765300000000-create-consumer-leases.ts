import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consumer ownership: one lease row per consumer (a projection, a subscription, an interface,
 * or one partition of a projection) and one row per running process. A lease is held while
 * `expires_at` is in the future by the database's clock; every claim increments `epoch`, and a
 * batch commits only if its lease row still carries the owner and epoch it started with.
 */
export class CreateConsumerLeases1765300000000 implements MigrationInterface {
  name = 'CreateConsumerLeases1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE consumer_leases (
      name text PRIMARY KEY,
      kind text NOT NULL,
      group_name text NOT NULL,
      owner text,
      epoch bigint NOT NULL DEFAULT 0,
      expires_at timestamptz,
      acquired_at timestamptz,
      heartbeat_at timestamptz,
      registered_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(
      `CREATE INDEX consumer_leases_group_ix ON consumer_leases (group_name)`,
    );
    await queryRunner.query(`CREATE TABLE consumer_processes (
      owner text PRIMARY KEY,
      pid integer NOT NULL,
      host text NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      heartbeat_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      groups text[] NOT NULL DEFAULT '{}'
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE consumer_processes');
    await queryRunner.query('DROP TABLE consumer_leases');
  }
}
