import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * The one-statement gapless flush (`appendBatch`) checked its streams' versions and states in
 * the statement's snapshot, which PostgreSQL takes when the statement starts: before it waits
 * for the log lock. A delete that another process committed while the statement waited was
 * not seen, and the append was stored after it (a tombstoned stream written to after all).
 * Versions were safe (the stream-version index refuses a taken one); states were not.
 *
 * This function takes the log lock and then checks, in a query of its own: a VOLATILE
 * function's queries take a fresh snapshot each (in READ COMMITTED), so the check sees every
 * commit made before the lock was granted. It also sends streams with a retention that can
 * hide a message as it is appended (`truncateBefore`, `maxCount`, the stream's or its
 * category's) to the checked path, which tells the live readers which ones are hidden.
 *
 * A function, no table: nothing is copied.
 */
export class AppendCheckAfterLock1765500000000 implements MigrationInterface {
  name = 'AppendCheckAfterLock1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ordinal_lock_log_and_check_streams(p_lock bigint, p_streams text[], p_expected bigint[])
      RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        PERFORM pg_advisory_xact_lock(p_lock);
        -- A query of its own after the lock: a fresh snapshot, which sees every earlier commit.
        RETURN (
          SELECT coalesce(bool_and(coalesce(s.version, 0) = e.want AND coalesce(st.state, 'live') = 'live'
                   AND st.truncate_before IS NULL AND st.max_count IS NULL AND cr.category IS NULL), true)
          FROM unnest(p_streams, p_expected) AS e(stream_id, want)
          LEFT JOIN streams s ON s.stream_id = e.stream_id
          LEFT JOIN stream_states st ON st.stream_id = e.stream_id
          LEFT JOIN category_rules cr ON cr.category = split_part(e.stream_id, '-', 1)
            AND (cr.truncate_before IS NOT NULL OR cr.max_count IS NOT NULL));
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_lock_log_and_check_streams(bigint, text[], bigint[])',
      'Takes the log lock, then tells whether every stream is at its expected version, live, and without a retention that hides on append (the one-statement gapless flush; a fresh snapshot after the lock)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION ordinal_lock_log_and_check_streams(bigint, text[], bigint[])`,
    );
  }
}
