import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The log: one table, one global index. `transaction_id` records the writing
 * transaction (xid8) for the gap-safe readers of concurrent mode; `streams` holds each
 * aggregate stream's head so a version check is an index lookup.
 */
export class CreateLog1764460800000 implements MigrationInterface {
  name = 'CreateLog1764460800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE messages (
      index bigint PRIMARY KEY,
      message_type text NOT NULL,
      user_id text,
      stream_id text,
      stream_version bigint,
      category text,
      body jsonb NOT NULL,
      metadata jsonb,
      schema_version integer NOT NULL DEFAULT 1,
      content_hash text NOT NULL,
      idempotency_key text,
      created_at timestamptz NOT NULL DEFAULT now(),
      transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
      CONSTRAINT messages_index_positive CHECK (index > 0),
      CONSTRAINT messages_stream_version_positive CHECK (stream_version IS NULL OR stream_version > 0)
    )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX messages_idempotency_key_uq ON messages (idempotency_key)
       WHERE idempotency_key IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX messages_stream_version_uq ON messages (stream_id, stream_version)
       WHERE stream_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_type_index_ix ON messages (message_type, index)`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_category_index_ix ON messages (category, index) WHERE category IS NOT NULL`,
    );
    // The head of the log: one row, whose lock serialises gapless writers across processes
    // and whose value is the highest committed index (a failed flush rolls it back).
    await queryRunner.query(`CREATE TABLE log_head (
      id smallint PRIMARY KEY CHECK (id = 1),
      position bigint NOT NULL
    )`);
    await queryRunner.query(
      `INSERT INTO log_head (id, position) SELECT 1, coalesce(max(index), 0) FROM messages`,
    );
    await queryRunner.query(`CREATE TABLE streams (
      stream_id text PRIMARY KEY,
      version bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE streams');
    await queryRunner.query('DROP TABLE log_head');
    await queryRunner.query('DROP TABLE messages');
  }
}
