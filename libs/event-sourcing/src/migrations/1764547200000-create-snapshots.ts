import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Aggregate snapshots: every saved snapshot is kept, keyed by (stream, version); loads use
 * the newest. `schema_version` is the state's own schema: a snapshot whose schema differs from
 * the aggregate's is ignored and the stream replayed.
 */
export class CreateSnapshots1764547200000 implements MigrationInterface {
  name = 'CreateSnapshots1764547200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE snapshots (
      stream_id text NOT NULL,
      version bigint NOT NULL,
      state jsonb NOT NULL,
      schema_version integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_id, version),
      CONSTRAINT snapshots_version_positive CHECK (version > 0)
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE snapshots');
  }
}
