import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Concurrent mode and the low watermark: positions come from a sequence with
 * CACHE 1 (values ascend across sessions), and holes abandoned by the gap timeout are kept
 * in `log_skipped` so a row that commits inside one later is found as a late arrival.
 */
export class CreateConcurrentOrdering1764460800001 implements MigrationInterface {
  name = 'CreateConcurrentOrdering1764460800001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SEQUENCE messages_index_seq AS bigint START WITH 1 CACHE 1`);
    await queryRunner.query(
      `SELECT setval('messages_index_seq', max(index)) FROM messages HAVING max(index) IS NOT NULL`,
    );
    await queryRunner.query(`CREATE TABLE log_skipped (
      position bigint PRIMARY KEY,
      abandoned_at timestamptz NOT NULL DEFAULT now(),
      held_ms integer NOT NULL,
      arrived_at timestamptz
    )`);
    await queryRunner.query(
      `CREATE INDEX log_skipped_open_ix ON log_skipped (position) WHERE arrived_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE log_skipped');
    await queryRunner.query('DROP SEQUENCE messages_index_seq');
  }
}
