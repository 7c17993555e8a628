import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * Concurrent mode's aggregate append in one statement (`appendConcurrentStreams`, issue 30):
 * a stream append with explicit expected versions took a transaction of five round trips
 * (BEGIN, category locks, state read, INSERT, COMMIT), because what it writes depends on a
 * read under the categories' locks, and a single statement's snapshot predates its lock wait.
 *
 * This function does what the transaction's first two statements did, in the order the
 * watermark relies on (docs/design-notes.md, "One statement per concurrent flush"): it gives
 * the transaction its id, then takes the categories' advisory locks in ascending order, and
 * then checks the streams in a query of its own — a VOLATILE function's queries take a fresh
 * snapshot each (in READ COMMITTED), so the check sees every commit made before the last lock
 * was granted, as the transaction's state read did. The check is gapless mode's
 * (`ordinal_lock_log_and_check_streams`): each stream at its expected version, live, and
 * without a retention that hides a message as it is appended (its own `truncate_before` or
 * `max_count`, or its category's); anything else goes to the transaction, which reads them.
 *
 * A function, no table: nothing is copied.
 */
export class ConcurrentAppendCheckAfterLock1766000000100 implements MigrationInterface {
  name = 'ConcurrentAppendCheckAfterLock1766000000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ordinal_lock_categories_and_check_streams(p_locks bigint[], p_streams text[], p_expected bigint[])
      RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        k bigint;
      BEGIN
        -- The id first: a reader that cannot see other sessions counts only writers that had one.
        PERFORM pg_current_xact_id();
        -- Then the categories' locks, in ascending order: two flushes never wait for each other in a cycle.
        FOR k IN SELECT DISTINCT l FROM unnest(p_locks) AS l ORDER BY l LOOP
          PERFORM pg_advisory_xact_lock(k);
        END LOOP;
        -- A query of its own after the locks: a fresh snapshot, which sees every earlier commit.
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
      'ordinal_lock_categories_and_check_streams(bigint[], text[], bigint[])',
      "Gives the transaction its id, takes the categories' advisory locks in ascending order, then tells whether every stream is at its expected version, live, and without a retention that hides on append (the one-statement concurrent stream append; a fresh snapshot after the locks)",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION ordinal_lock_categories_and_check_streams(bigint[], text[], bigint[])`,
    );
  }
}
