import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * Archived segments (docs/storage.md, "Archive"): a segment exported to an archive store,
 * verified, then detached and dropped, keeps its row in `log_segments` with tier `archived`
 * and its manifest; `archived_stream_chunks` says which archived chunks hold a stream's rows
 * (a stream read or an aggregate load reads only those). Two guards make a read that believes
 * a range hot fail instead of reading less when the range was archived meanwhile: evaluated
 * once per statement, in its snapshot, so a read sees either the segment's rows or the error.
 */
export class Archive1766200000000 implements MigrationInterface {
  name = 'Archive1766200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE log_segments DROP CONSTRAINT log_segments_tier`);
    await queryRunner.query(
      `ALTER TABLE log_segments ADD CONSTRAINT log_segments_tier CHECK (tier IN ('hot', 'archived'))`,
    );
    await queryRunner.query(`ALTER TABLE log_segments
      ADD COLUMN manifest jsonb,
      ADD COLUMN archived_at timestamptz`);
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.manifest IS 'An archived segment''s manifest (its files, row counts and checksums), as written to the archive store; kept after a restore (the files stay).'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.archived_at IS 'When the segment was last archived (NULL: never).'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN log_segments.tier IS 'hot: a partition of messages; archived: in the archive store only (its manifest says where).'`,
    );

    await queryRunner.query(`CREATE TABLE archived_stream_chunks (
      stream_id text NOT NULL,
      chunk_first bigint NOT NULL,
      CONSTRAINT archived_stream_chunks_pk PRIMARY KEY (stream_id, chunk_first)
    )`);
    await queryRunner.query(
      `CREATE INDEX archived_stream_chunks_chunk_ix ON archived_stream_chunks (chunk_first)`,
    );
    await queryRunner.query(
      `COMMENT ON TABLE archived_stream_chunks IS 'Which chunks of archived segments hold rows of a stream: what a stream read loads from the archive store.'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN archived_stream_chunks.stream_id IS 'A stream with rows in the chunk.'`,
    );
    await queryRunner.query(
      `COMMENT ON COLUMN archived_stream_chunks.chunk_first IS 'The first index of the chunk (its file in the segment''s manifest).'`,
    );

    await queryRunner.query(`
      CREATE FUNCTION ordinal_require_hot(p_from bigint, p_to bigint) RETURNS boolean
      LANGUAGE plpgsql STABLE AS $fn$
      DECLARE
        archived bigint;
      BEGIN
        SELECT first_index INTO archived FROM log_segments
        WHERE tier <> 'hot' AND first_index <= p_to AND end_index > p_from
        ORDER BY first_index LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION USING
            ERRCODE = 'OA001',
            MESSAGE = format('indices %s..%s reach the archived segment from %s', p_from, p_to, archived),
            HINT = 'Read the range through Ordinal, which reads archived segments from the archive store.';
        END IF;
        RETURN true;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_require_hot(bigint, bigint)',
      'Guard of a read of messages it believes hot: true, or SQLSTATE OA001 when a segment in [p_from, p_to] is archived (the reader then reads it from the archive store).',
    );
    await queryRunner.query(`
      CREATE FUNCTION ordinal_require_archived(p_first bigint, p_checksum text) RETURNS boolean
      LANGUAGE plpgsql STABLE AS $fn$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM log_segments WHERE first_index = p_first AND tier = 'archived'
                         AND manifest->>'sha256' = p_checksum) THEN
          RAISE EXCEPTION USING
            ERRCODE = 'OA001',
            MESSAGE = format('the segment from %s is no longer archived as %s', p_first, p_checksum);
        END IF;
        RETURN true;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_require_archived(bigint, text)',
      "Guard of a read of an archived segment's rows from the archive store: true while it is archived with the manifest checksum p_checksum, else SQLSTATE OA001 (restored, or a chunk rewritten by a scavenge, since the reader looked).",
    );
    await queryRunner.query(`
      CREATE FUNCTION ordinal_require_stream_chunks(p_stream text, p_chunks bigint[]) RETURNS boolean
      LANGUAGE plpgsql STABLE AS $fn$
      DECLARE
        actual bigint[];
      BEGIN
        SELECT coalesce(array_agg(chunk_first ORDER BY chunk_first), '{}') INTO actual
        FROM archived_stream_chunks WHERE stream_id = p_stream;
        IF actual IS DISTINCT FROM coalesce(p_chunks, '{}') THEN
          RAISE EXCEPTION USING
            ERRCODE = 'OA001',
            MESSAGE = format('stream %s has archived rows in chunks %s, not %s', p_stream, actual, p_chunks),
            HINT = 'Read the stream through Ordinal, which reads archived segments from the archive store.';
        END IF;
        RETURN true;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_require_stream_chunks(text, bigint[])',
      'Guard of a stream read: true when the archived chunks holding rows of p_stream are exactly p_chunks (the ones the reader loaded), else SQLSTATE OA001.',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const [{ archived }] = (await queryRunner.query(
      `SELECT count(*)::int AS archived FROM log_segments WHERE tier <> 'hot'`,
    )) as { archived: number }[];
    if (archived > 0)
      throw new Error(
        `Archive1766200000000 cannot be reverted while ${archived} segments are archived: restore them first`,
      );
    await queryRunner.query(`DROP FUNCTION ordinal_require_stream_chunks(text, bigint[])`);
    await queryRunner.query(`DROP FUNCTION ordinal_require_archived(bigint, text)`);
    await queryRunner.query(`DROP FUNCTION ordinal_require_hot(bigint, bigint)`);
    await queryRunner.query(`DROP TABLE archived_stream_chunks`);
    await queryRunner.query(
      `ALTER TABLE log_segments DROP COLUMN manifest, DROP COLUMN archived_at`,
    );
    await queryRunner.query(`ALTER TABLE log_segments DROP CONSTRAINT log_segments_tier`);
    await queryRunner.query(
      `ALTER TABLE log_segments ADD CONSTRAINT log_segments_tier CHECK (tier IN ('hot'))`,
    );
  }
}
