import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One view of every consumer on the database: a checkpoint records what it reads (`stream`)
 * and when it last moved (`progressed_at`, for the stuck check); `consumer_requests` carries
 * operations (rebuild, replay of parked messages, resume) to whichever process owns the
 * consumer, which runs them and records the outcome.
 */
export class ConsumerDirectory1765200000002 implements MigrationInterface {
  name = 'ConsumerDirectory1765200000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE checkpoints ADD COLUMN stream text, ADD COLUMN progressed_at timestamptz NOT NULL DEFAULT now()`,
    );
    await queryRunner.query(`CREATE TABLE consumer_requests (
      id bigserial PRIMARY KEY,
      consumer text NOT NULL,
      command text NOT NULL,
      requested_at timestamptz NOT NULL DEFAULT now(),
      done_at timestamptz,
      result jsonb,
      error text
    )`);
    await queryRunner.query(
      `CREATE INDEX consumer_requests_pending_ix ON consumer_requests (consumer) WHERE done_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE consumer_requests');
    await queryRunner.query(
      'ALTER TABLE checkpoints DROP COLUMN stream, DROP COLUMN progressed_at',
    );
  }
}
