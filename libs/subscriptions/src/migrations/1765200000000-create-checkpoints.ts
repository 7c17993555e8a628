import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Checkpoints of subscriptions and projections: the position applied so far,
 * the replay boundary (`live_from`, the head when first started or last rebuilt), and the
 * state and last error an operator sees.
 */
export class CreateCheckpoints1765200000000 implements MigrationInterface {
  name = 'CreateCheckpoints1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE checkpoints (
      name text PRIMARY KEY,
      kind text NOT NULL DEFAULT 'subscription',
      position bigint NOT NULL DEFAULT 0,
      live_from bigint NOT NULL DEFAULT 0,
      state text NOT NULL DEFAULT 'running',
      last_error text,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT checkpoints_position_non_negative CHECK (position >= 0)
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE checkpoints');
  }
}
