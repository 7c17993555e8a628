import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A reader that restarts asks for the abandoned positions still open or arrived since it
 * stopped (`readOpenSkipped`). `log_skipped` keeps every exactly released hole for ever, so on
 * a long-lived concurrent log it grows by one row per rolled-back write; without an index on
 * `arrived_at` that question read the whole table (40 ms at 200,000 rows) at every feed and
 * subscription start.
 */
export class SkippedArrivalsIndex1764460800150 implements MigrationInterface {
  name = 'SkippedArrivalsIndex1764460800150';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX log_skipped_arrived_ix ON log_skipped (arrived_at) WHERE arrived_at IS NOT NULL AND NOT released_exactly`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX log_skipped_arrived_ix`);
  }
}
