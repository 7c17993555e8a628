import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * A consumer group's ack was one statement that locked the group's row and then computed the
 * checkpoint from the deliveries left, in the snapshot PostgreSQL takes when the statement
 * starts: before it waits for the lock. A transaction that committed while it waited was not
 * seen. Two acks waiting together left the checkpoint below events already done (for good,
 * once nothing else moved it); an ack waiting behind a fetch that read the log on moved it
 * past events not yet delivered.
 *
 * These functions take the group's lock, then work in queries of their own: a VOLATILE
 * function's queries take a fresh snapshot each (in READ COMMITTED), so they see every commit
 * made before the lock was granted, and still in one round trip. `ordinal_group_advance` is the
 * one rule that moves a checkpoint, used by the ack and by every other operation.
 *
 * Functions, no table: nothing is copied.
 */
export class GroupAckAfterLock1765200000300 implements MigrationInterface {
  name = 'GroupAckAfterLock1765200000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ordinal_group_advance(p_group text) RETURNS bigint
      LANGUAGE sql VOLATILE AS $fn$
        UPDATE consumer_groups g SET checkpoint = GREATEST(g.checkpoint, COALESCE(
            (SELECT min(d.index) - 1 FROM consumer_group_deliveries d
              WHERE d.group_name = g.name AND d.index > g.checkpoint),
            g.read_to)), updated_at = now()
        WHERE g.name = p_group RETURNING g.checkpoint
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_advance(text)',
      'Moves a consumer group’s checkpoint to just below its lowest delivery above it not yet done (or to read_to when none is left), never back; returns it. The caller holds the group’s row lock.',
    );
    await queryRunner.query(`
      CREATE FUNCTION ordinal_group_ack(p_group text, p_member text, p_epoch bigint, p_indices bigint[],
                                        p_lease_ms double precision,
                                        OUT found boolean, OUT renewed boolean, OUT moved_to bigint, OUT acked bigint[])
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        PERFORM 1 FROM consumer_groups WHERE name = p_group FOR UPDATE;
        found := FOUND;
        renewed := false;
        acked := '{}';
        IF NOT found THEN RETURN; END IF;
        -- Each query below is one of its own after the lock: a fresh snapshot, which sees every
        -- commit made before the lock was granted.
        UPDATE consumer_group_members SET last_seen_at = now(),
            lease_expires_at = GREATEST(lease_expires_at, clock_timestamp() + p_lease_ms * interval '1 millisecond')
          WHERE group_name = p_group AND member_id = p_member AND epoch = p_epoch
            AND lease_expires_at >= clock_timestamp();
        renewed := FOUND;
        IF NOT renewed THEN RETURN; END IF;
        WITH gone AS (
          DELETE FROM consumer_group_deliveries
          WHERE group_name = p_group AND member_id = p_member AND epoch = p_epoch AND index = ANY(p_indices)
          RETURNING index)
        SELECT coalesce(array_agg(index ORDER BY index), '{}') INTO acked FROM gone;
        moved_to := ordinal_group_advance(p_group);
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_ack(text, text, bigint, bigint[], double precision)',
      'A consumer group member’s ack in one round trip: locks the group, renews the member’s lease if it still holds the epoch, deletes what it holds of the indices and moves the checkpoint (queries after the lock see every earlier commit). found: the group exists; renewed: the lease held (else nothing changed).',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION ordinal_group_ack(text, text, bigint, bigint[], double precision)`,
    );
    await queryRunner.query(`DROP FUNCTION ordinal_group_advance(text)`);
  }
}
