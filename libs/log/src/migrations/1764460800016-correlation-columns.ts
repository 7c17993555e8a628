import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Correlation and causation ids and the stored trace context (issue 16) as columns of their
 * own rather than metadata keys: the user's metadata stays exactly as sent, and
 * `GET /api/events?correlationId=` reads a correlation in index order from one btree index.
 * Nullable: rows stored before have none (adding a nullable column without a default
 * rewrites nothing).
 */
export class CorrelationColumns1764460800016 implements MigrationInterface {
  name = 'CorrelationColumns1764460800016';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE messages ADD COLUMN correlation_id text, ADD COLUMN causation_id text, ADD COLUMN trace_parent text`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_correlation_ix ON messages (correlation_id, index) WHERE correlation_id IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX messages_correlation_ix`);
    await queryRunner.query(
      `ALTER TABLE messages DROP COLUMN correlation_id, DROP COLUMN causation_id, DROP COLUMN trace_parent`,
    );
  }
}
