import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every position the watermark passes without a row is watched for a late row for a while,
 * exact releases included: `watch_until` is when readers stop looking (NULL on rows recorded
 * before, which keep the old rules). An exact release says no running transaction could fill
 * the position, not that no session can: a position drawn by a transaction that has ended, or
 * an index chosen by hand, can still arrive (docs/guarantees.md).
 *
 * Both indexes are partial and empty when created (no older row matches), so this migration
 * reads `log_skipped` once and writes nothing else; `messages` is not touched.
 */
export class LateWatch1764460800210 implements MigrationInterface {
  name = 'LateWatch1764460800210';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE log_skipped ADD COLUMN watch_until timestamptz`);
    // The open exact releases still watched (the re-scan and a restarting reader read the recent end).
    await queryRunner.query(
      `CREATE INDEX log_skipped_exact_watch_ix ON log_skipped (watch_until)
       WHERE released_exactly AND arrived_at IS NULL AND watch_until IS NOT NULL`,
    );
    // Exact releases a row arrived in (a restarting reader asks for those arrived since it stopped).
    await queryRunner.query(
      `CREATE INDEX log_skipped_exact_arrived_ix ON log_skipped (arrived_at)
       WHERE released_exactly AND arrived_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX log_skipped_exact_arrived_ix`);
    await queryRunner.query(`DROP INDEX log_skipped_exact_watch_ix`);
    await queryRunner.query(`ALTER TABLE log_skipped DROP COLUMN watch_until`);
  }
}
