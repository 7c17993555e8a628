import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';

/**
 * `ordinal_group_ack` (GroupAckAfterLock) answered `found` null whatever happened: inside a
 * PL/pgSQL function the special variable FOUND shadows an OUT parameter named `found`, so
 * `found := FOUND` assigned the variable to itself. An ack for a group that does not exist was
 * told its lease was lost (409) instead of "no such group" (404). The same function, with the
 * parameter reached by its number (an alias).
 *
 * A function, no table: nothing is copied.
 */
export class GroupAckFound1765200000410 implements MigrationInterface {
  name = 'GroupAckFound1765200000410';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_ack(p_group text, p_member text, p_epoch bigint, p_indices bigint[],
                                        p_lease_ms double precision,
                                        OUT found boolean, OUT renewed boolean, OUT moved_to bigint, OUT acked bigint[])
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        -- The OUT parameter found by its number: FOUND, the PL/pgSQL variable, shadows its name
        -- (even qualified by the function's name).
        group_found ALIAS FOR $6;
      BEGIN
        PERFORM 1 FROM consumer_groups WHERE name = p_group FOR UPDATE;
        group_found := FOUND;
        renewed := false;
        acked := '{}';
        IF NOT group_found THEN RETURN; END IF;
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
    // CREATE OR REPLACE drops the function's settings: pin its search_path again.
    await pinFunction(
      queryRunner,
      'ordinal_group_ack(text, text, bigint, bigint[], double precision)',
      'A consumer group member’s ack in one round trip: locks the group, renews the member’s lease if it still holds the epoch, deletes what it holds of the indices and moves the checkpoint (queries after the lock see every earlier commit). found: the group exists; renewed: the lease held (else nothing changed).',
    );
  }

  async down(): Promise<void> {
    // The function as it was answered found null: nothing to go back to.
  }
}
