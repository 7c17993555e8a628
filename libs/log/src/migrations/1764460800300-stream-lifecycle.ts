import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Streams that end (docs/lifecycle.md). Nothing here copies the log: `messages` gains one
 * nullable column (a catalogue change), and three new tables stay small.
 *
 * - `messages.erased`: NULL while the row holds its body and metadata as stored; a scavenge
 *   sets it to the reason that hid the row (`deleted`, `truncated`, `expired`) when it erases
 *   them in place (body `null`, metadata NULL). The row, its index and its kept fields stay.
 * - `stream_states`: one row per stream with a lifecycle (deleted, tombstoned, or metadata):
 *   versions up to `deleted_through` are deleted; the retention settings; the metadata's own
 *   version. Most streams never have a row, so readers join a small table.
 * - `category_rules`: the same retention settings for every stream of a category.
 * - `scavenge_runs`: one row per scavenge run, with the position it has erased up to (a run
 *   killed halfway resumes there) and what it freed.
 */
export class StreamLifecycle1764460800300 implements MigrationInterface {
  name = 'StreamLifecycle1764460800300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ADD COLUMN erased text`);
    await queryRunner.query(`CREATE TABLE stream_states (
      stream_id text PRIMARY KEY,
      state text NOT NULL DEFAULT 'live' CHECK (state IN ('live', 'deleted', 'tombstoned')),
      deleted_through bigint NOT NULL DEFAULT 0,
      max_age bigint CHECK (max_age > 0),
      max_count bigint CHECK (max_count > 0),
      truncate_before bigint CHECK (truncate_before > 0),
      custom jsonb,
      metadata_version bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE TABLE category_rules (
      category text PRIMARY KEY,
      max_age bigint CHECK (max_age > 0),
      max_count bigint CHECK (max_count > 0),
      truncate_before bigint CHECK (truncate_before > 0),
      custom jsonb,
      metadata_version bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE TABLE scavenge_runs (
      id bigserial PRIMARY KEY,
      status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'failed')),
      started_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      through bigint NOT NULL,
      position bigint NOT NULL DEFAULT 0,
      rows_erased bigint NOT NULL DEFAULT 0,
      bytes_freed bigint NOT NULL DEFAULT 0,
      batches bigint NOT NULL DEFAULT 0,
      table_bytes_before bigint,
      table_bytes_after bigint,
      error text
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE scavenge_runs');
    await queryRunner.query('DROP TABLE category_rules');
    await queryRunner.query('DROP TABLE stream_states');
    await queryRunner.query('ALTER TABLE messages DROP COLUMN erased');
  }
}
