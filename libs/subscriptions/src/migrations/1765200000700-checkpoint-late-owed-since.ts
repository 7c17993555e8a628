import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A subscription resumed its watch for late arrivals from its checkpoint's save time
 * (`updated_at`): an arrival another process claimed just before a save, not yet delivered
 * (its late check runs every `lateCheckMs`), was lost if it stopped before its next check. It
 * now saves, with its position, the earliest time it still owes an arrival from, and resumes
 * with that.
 *
 * A nullable column without a default: no row is rewritten. Null marks a row written before
 * the column existed (a restart then counts from `updated_at`, as before); a subscription that
 * owes nothing writes `infinity` (see sql/checkpoint.sql.ts).
 */
export class CheckpointLateOwedSince1765200000700 implements MigrationInterface {
  name = 'CheckpointLateOwedSince1765200000700';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE checkpoints ADD COLUMN late_owed_since timestamptz`);
    await queryRunner.query(`COMMENT ON COLUMN checkpoints.late_owed_since IS
      'No late arrival the subscription still owed at or below its position was claimed before this (log_skipped.arrived_at): a restart watches those claimed since. infinity: it owed none; null: written before this column (a restart counts from updated_at)'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE checkpoints DROP COLUMN late_owed_since`);
  }
}
