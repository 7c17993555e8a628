import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The watermark survives a restart (concurrent mode). `log_watermark` keeps a position below
 * which every position is final (committed, or recorded in `log_skipped`); a new process
 * starts its scan there instead of at 1. Holes released exactly are recorded in
 * `log_skipped` too (`released_exactly`), so no process ever holds them again and the head
 * never goes back across a restart; readers do not watch those for late arrivals.
 */
export class DurableWatermark1764460800002 implements MigrationInterface {
  name = 'DurableWatermark1764460800002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE log_watermark (
      id smallint PRIMARY KEY CHECK (id = 1),
      position bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`INSERT INTO log_watermark (id, position) VALUES (1, 0)`);
    await queryRunner.query(
      `ALTER TABLE log_skipped ADD COLUMN released_exactly boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(`DROP INDEX log_skipped_open_ix`);
    await queryRunner.query(
      `CREATE INDEX log_skipped_open_ix ON log_skipped (position) WHERE arrived_at IS NULL AND NOT released_exactly`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX log_skipped_open_ix`);
    await queryRunner.query(`DELETE FROM log_skipped WHERE released_exactly`);
    await queryRunner.query(`ALTER TABLE log_skipped DROP COLUMN released_exactly`);
    await queryRunner.query(
      `CREATE INDEX log_skipped_open_ix ON log_skipped (position) WHERE arrived_at IS NULL`,
    );
    await queryRunner.query('DROP TABLE log_watermark');
  }
}
