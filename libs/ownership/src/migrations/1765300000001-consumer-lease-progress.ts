import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a consumer's owner last reported of it, written with each heartbeat and at hand-over:
 * a push interface's status (so every server lists every interface, wherever it runs) and a
 * realtime interface's published position (so the next owner publishes from there instead of
 * from the then head).
 */
export class ConsumerLeaseProgress1765300000001 implements MigrationInterface {
  name = 'ConsumerLeaseProgress1765300000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE consumer_leases ADD COLUMN progress jsonb, ADD COLUMN progress_at timestamptz',
    );
    await queryRunner.query(
      'CREATE INDEX consumer_processes_expires_ix ON consumer_processes (expires_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX consumer_processes_expires_ix');
    await queryRunner.query(
      'ALTER TABLE consumer_leases DROP COLUMN progress, DROP COLUMN progress_at',
    );
  }
}
