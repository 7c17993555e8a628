import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';
import { GroupClaimHandsOnRead1765200000600 } from './1765200000600-group-claim-hands-on-read.js';

/**
 * Two costs of every event a group hands out, measured on the group's SQL alone (claim, render
 * and ack of 100,000 events by four members; docs/performance.md, "Consumer groups"):
 *
 * - **An index entry per delivery for the expiry by deadline.** Every delivery added held got
 *   an entry in `consumer_group_deliveries_deadline_ix` as well as in the held index, though
 *   the deadline is only ever looked up per member: what a dead member holds, or holds under an
 *   old epoch, expires whatever its deadline, so only a live member's deliveries under its
 *   epoch need the deadline, and members are few. The held index gains the deadline (group,
 *   member, epoch, deadline) and the deadline index goes: one index entry less per delivery.
 * - **The checkpoint's rule planned on every call.** `ordinal_group_advance`, run by every ack
 *   and by every claim that read on, was a SQL function: its UPDATE was parsed and planned on
 *   each call. The same UPDATE in PL/pgSQL keeps its plan for the session.
 *
 * Two indexes on the deliveries (a queue, not the log) and functions: nothing large is copied.
 */
export class GroupHeldIndexDeadline1765200000900 implements MigrationInterface {
  name = 'GroupHeldIndexDeadline1765200000900';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX consumer_group_deliveries_held_ix`);
    await queryRunner.query(
      `CREATE INDEX consumer_group_deliveries_held_ix ON consumer_group_deliveries (group_name, member_id, epoch, deadline) WHERE member_id IS NOT NULL`,
    );
    await queryRunner.query(`COMMENT ON INDEX consumer_group_deliveries_held_ix IS
      'Deliveries in flight by member, epoch and deadline: a member''s acks and count, those held under an epoch that is over, and those past the deadline under the member''s epoch'`);
    await queryRunner.query(`DROP INDEX consumer_group_deliveries_deadline_ix`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_advance(p_group text) RETURNS bigint
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_checkpoint bigint;
      BEGIN
        UPDATE consumer_groups g SET checkpoint = GREATEST(g.checkpoint, COALESCE(
            (SELECT min(d.index) - 1 FROM consumer_group_deliveries d
              WHERE d.group_name = g.name AND d.index > g.checkpoint),
            g.read_to)), updated_at = now()
        WHERE g.name = p_group RETURNING g.checkpoint INTO v_checkpoint;
        RETURN v_checkpoint;
      END
      $fn$`);
    // CREATE OR REPLACE drops the function's settings: pin its search_path again.
    await pinFunction(
      queryRunner,
      'ordinal_group_advance(text)',
      'Moves a consumer group’s checkpoint to just below its lowest delivery above it not yet done (or to read_to when none is left), never back; returns it. The caller holds the group’s row lock. PL/pgSQL: its plan is kept for the session.',
    );
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_claim(
          p_group text, p_member text, p_max integer, p_lease_ms double precision, p_server text,
          p_identity jsonb, p_head bigint, p_read_page integer, p_read_ahead integer,
          p_fill text, p_source text[], p_key_path text[], p_watch text, p_retention_ms double precision,
          OUT group_found boolean, OUT stale boolean, OUT member_epoch bigint, OUT parked_count integer,
          OUT moved boolean, OUT starved boolean, OUT watching boolean,
          OUT claimed_indices bigint[], OUT claimed_attempts integer[], OUT claimed_late boolean[])
      LANGUAGE plpgsql VOLATILE
      -- The read-on's cost estimate grows with the unread part of the log (the hidden-message
      -- filter is a guess), past jit_optimize_above_cost on a long log: compiling it took 0.5 s
      -- for a read of 1 ms (every fetch that read on, before too). None of these queries gains.
      SET jit = off
      -- Every query here reads a few rows of one group by a key. The deliveries are a queue: their
      -- statistics are never current (a fresh table looks empty), and a sequential or bitmap scan
      -- chosen on them walks every row acknowledged since the last vacuum (a bitmap scan never
      -- marks a dead entry, so the next one walks them again).
      SET enable_seqscan = off
      SET enable_bitmapscan = off
      AS $fn$
      DECLARE
        v_definition jsonb;
        v_read_to bigint;
        v_checkpoint bigint;
        v_picked tid[];
        v_removed integer;
        v_now timestamptz;
        v_floor bigint;
        v_held integer;
        v_room integer;
        v_pinned boolean;
        v_category boolean;
        v_outstanding integer;
        v_up_to bigint;
        v_limit integer;
        v_read bigint[];
        v_to bigint;
        v_indices bigint[];
        v_attempts integer[];
        v_late boolean[];
        v_expired bigint[];
        v_handed bigint[];
      BEGIN
        SELECT g.definition, g.read_to, g.checkpoint, g.member_epoch_floor INTO v_definition, v_read_to, v_checkpoint, v_floor
          FROM consumer_groups g WHERE g.name = p_group FOR UPDATE;
        -- (FOUND, the PL/pgSQL variable, would shadow an OUT parameter named found)
        group_found := FOUND;
        stale := false;
        parked_count := 0;
        moved := false;
        starved := false;
        watching := false;
        claimed_indices := '{}';
        claimed_attempts := '{}';
        claimed_late := '{}';
        IF NOT group_found THEN RETURN; END IF;
        IF jsonb_build_object('source', v_definition->'source', 'strategy', v_definition->'strategy',
                              'keyPath', v_definition->'keyPath') IS DISTINCT FROM p_identity THEN
          stale := true;
          RETURN;
        END IF;
        -- Each query below is one of its own after the lock: a fresh snapshot, which sees every
        -- commit made before the lock was granted.

        -- Members dead for longer than the retention leave the group; the highest epoch they had
        -- becomes the floor that a returning id starts above.
        WITH removed AS (
          DELETE FROM consumer_group_members m
          WHERE m.group_name = p_group
            AND m.lease_expires_at < clock_timestamp() - p_retention_ms * interval '1 millisecond'
          RETURNING m.epoch
        )
        SELECT GREATEST(v_floor, coalesce(max(removed.epoch), 0)), count(*)::int INTO v_floor, v_removed FROM removed;
        UPDATE consumer_groups g SET member_epoch_floor = v_floor
          WHERE g.name = p_group AND g.member_epoch_floor < v_floor;

        -- The member joins or renews its lease: a live member keeps its epoch, a new one starts
        -- above the floor (at 1 in a group that removed none), one whose lease expired (what it
        -- held went back) starts a new epoch.
        INSERT INTO consumer_group_members AS m (group_name, member_id, epoch, lease_expires_at, server)
        VALUES (p_group, p_member, v_floor + 1, clock_timestamp() + p_lease_ms * interval '1 millisecond', p_server)
        ON CONFLICT (group_name, member_id) DO UPDATE SET
          epoch = CASE WHEN m.lease_expires_at >= clock_timestamp() THEN m.epoch ELSE m.epoch + 1 END,
          server = EXCLUDED.server, last_seen_at = now(),
          lease_expires_at = GREATEST(m.lease_expires_at, EXCLUDED.lease_expires_at)
        RETURNING m.epoch INTO member_epoch;

        -- What members hold past its deadline, or under an epoch that is over, is ready again,
        -- or parked once it was delivered maxDeliveries times.
        -- Each by an index, none through every delivery in flight: past the deadline under its
        -- live member's epoch; held by a member whose lease expired; held under an epoch below its
        -- member's (epochs only grow, and only a member's own claim raises its epoch, here); held
        -- by a member removed above (only then can a delivery's member be missing).
        -- (the time as a value: an index can look up a bound, not a function called per row)
        v_now := clock_timestamp();
        -- Past the deadline: looked up per live member under its epoch, a range of the held index
        -- (group, member, epoch, deadline); what else is held is expired whatever its deadline (a
        -- dead member, an epoch below the member's; a missing member only after a removal here).
        SELECT coalesce(array_agg(x.index), '{}') INTO v_expired FROM (
          SELECT d.index FROM consumer_group_members m JOIN consumer_group_deliveries d
            ON d.group_name = m.group_name AND d.member_id = m.member_id AND d.epoch = m.epoch AND d.deadline < v_now
          WHERE m.group_name = p_group AND m.lease_expires_at >= v_now
          UNION
          SELECT d.index FROM consumer_group_members m JOIN consumer_group_deliveries d
            ON d.group_name = m.group_name AND d.member_id = m.member_id
          WHERE m.group_name = p_group AND m.lease_expires_at < v_now
          UNION
          SELECT d.index FROM consumer_group_members m JOIN consumer_group_deliveries d
            ON d.group_name = m.group_name AND d.member_id = m.member_id AND d.epoch < m.epoch
          WHERE m.group_name = p_group AND m.lease_expires_at >= v_now
          UNION
          SELECT d.index FROM consumer_group_deliveries d
          WHERE v_removed > 0 AND d.group_name = p_group AND d.member_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM consumer_group_members m WHERE m.group_name = d.group_name AND m.member_id = d.member_id)
        ) x;
        -- Almost always none: then nothing below runs (planned as a join of the group's every
        -- delivery with the expired ones, it walked them all, about 5 ms of every claim).
        IF cardinality(v_expired) > 0 THEN
          WITH gone AS (
            DELETE FROM consumer_group_deliveries d
            WHERE d.group_name = p_group AND d.index = ANY(v_expired) AND d.attempt >= (v_definition->>'maxDeliveries')::int
            RETURNING d.index, d.attempt
          ), parked AS (
            INSERT INTO consumer_group_parked (group_name, index, reason, attempts)
            SELECT p_group, gone.index, 'not acknowledged after ' || gone.attempt || ' deliveries', gone.attempt FROM gone
            ON CONFLICT (group_name, index) DO UPDATE SET reason = EXCLUDED.reason, attempts = EXCLUDED.attempts, parked_at = now()
            RETURNING 1
          ), released AS (
            UPDATE consumer_group_deliveries d SET member_id = NULL, epoch = NULL, deadline = NULL
            WHERE d.group_name = p_group AND d.index = ANY(v_expired) AND d.attempt < (v_definition->>'maxDeliveries')::int
            RETURNING 1
          )
          SELECT (SELECT count(*) FROM parked)::int INTO parked_count;
        END IF;

        -- As many as the member may still hold (maxInFlight).
        SELECT count(*)::int INTO v_held FROM consumer_group_deliveries d
          WHERE d.group_name = p_group AND d.member_id = p_member AND d.epoch = member_epoch;
        v_room := LEAST(p_max, (v_definition->>'maxInFlight')::int - v_held);
        v_pinned := v_definition->>'strategy' <> 'round_robin';
        v_category := v_definition->'source' ? 'category';

        -- Claim the ready ones, lowest index first (pinned: only the oldest outstanding delivery of
        -- each key; one without a key always), and read the log on when they run out: at most
        -- three reads, and never more than p_read_ahead outstanding.
        FOR v_round IN 0..3 LOOP
          IF v_room > 0 THEN
            -- Two bounded scans, each in index order: the deliveries above the checkpoint (the
            -- primary key from the checkpoint on: the acknowledged rows below it, dead until a
            -- vacuum, are not walked through), and those added below read_to (late arrivals,
            -- replays: the only ones that can be at or below the checkpoint), by their own index.
            SELECT coalesce(array_agg(p.ctid), '{}') INTO v_picked FROM (
              SELECT r.ctid FROM (
                (SELECT d.index, d.ctid FROM consumer_group_deliveries d
                  WHERE d.group_name = p_group AND d.index > v_checkpoint AND d.member_id IS NULL
                    AND (NOT v_pinned OR d.key IS NULL OR NOT EXISTS (
                      SELECT 1 FROM consumer_group_deliveries e
                      WHERE e.group_name = p_group AND e.key = d.key AND e.index < d.index))
                  ORDER BY d.index LIMIT v_room)
                UNION
                (SELECT d.index, d.ctid FROM consumer_group_deliveries d
                  WHERE d.group_name = p_group AND d.below_read_to AND d.member_id IS NULL
                    AND (NOT v_pinned OR d.key IS NULL OR NOT EXISTS (
                      SELECT 1 FROM consumer_group_deliveries e
                      WHERE e.group_name = p_group AND e.key = d.key AND e.index < d.index))
                  ORDER BY d.index LIMIT v_room)
              ) r ORDER BY r.index LIMIT v_room) p;
            -- The picked rows by their row address: nothing can move them before the update (every
            -- change to a group's deliveries holds its lock), and no plan walks the group to find
            -- them (a join with them, or their group and indices, did with stale statistics).
            v_indices := '{}';
            v_attempts := '{}';
            v_late := '{}';
            IF cardinality(v_picked) > 0 THEN
              WITH claimed AS (
                UPDATE consumer_group_deliveries d SET member_id = p_member, epoch = member_epoch,
                  attempt = d.attempt + 1,
                  deadline = clock_timestamp() + (v_definition->>'ackTimeoutMs')::double precision * interval '1 millisecond'
                WHERE d.ctid = ANY(v_picked)
                RETURNING d.index, d.attempt, d.late
              )
              SELECT coalesce(array_agg(c.index), '{}'), coalesce(array_agg(c.attempt), '{}'),
                     coalesce(array_agg(c.late), '{}')
                INTO v_indices, v_attempts, v_late FROM claimed c;
            END IF;
            claimed_indices := claimed_indices || v_indices;
            claimed_attempts := claimed_attempts || v_attempts;
            claimed_late := claimed_late || v_late;
            v_room := v_room - cardinality(v_indices);
          END IF;
          EXIT WHEN v_room <= 0 OR v_round = 3;
          -- Outstanding above the checkpoint, counted up to the bound (not through the dead rows below it).
          SELECT count(*)::int INTO v_outstanding FROM (
            SELECT 1 FROM consumer_group_deliveries d
            WHERE d.group_name = p_group AND d.index > v_checkpoint LIMIT p_read_ahead) o;
          EXIT WHEN v_outstanding >= p_read_ahead;
          -- Never past the safe head the caller read before its statement began (all below it is
          -- final, and visible to that statement); one category reads without a bound (its
          -- positions commit in order).
          v_up_to := CASE WHEN v_category THEN 9223372036854775807 ELSE p_head END;
          IF v_up_to <= v_read_to THEN
            starved := true;
            EXIT;
          END IF;
          v_limit := GREATEST(v_room, p_read_page);
          -- The read hands the member what it has room for straight away (added held: no second
          -- write of each row to claim it), as the claim above would have picked them.
          EXECUTE p_fill INTO v_read, v_handed USING p_group, v_read_to, v_up_to, v_limit, p_source, p_key_path,
            p_member, member_epoch, v_room,
            clock_timestamp() + (v_definition->>'ackTimeoutMs')::double precision * interval '1 millisecond';
          claimed_indices := claimed_indices || v_handed;
          claimed_attempts := claimed_attempts || array_fill(1, ARRAY[cardinality(v_handed)]);
          claimed_late := claimed_late || array_fill(false, ARRAY[cardinality(v_handed)]);
          v_room := v_room - cardinality(v_handed);
          v_to := CASE WHEN cardinality(v_read) = v_limit THEN v_read[v_limit]
                       WHEN v_category THEN GREATEST(coalesce(v_read[cardinality(v_read)], v_read_to), p_head)
                       ELSE v_up_to END;
          IF v_to <= v_read_to THEN
            starved := true;
            EXIT;
          END IF;
          IF p_watch IS NOT NULL THEN
            EXECUTE p_watch USING v_read_to, v_to, p_group, v_read;
          END IF;
          UPDATE consumer_groups g SET read_to = GREATEST(g.read_to, v_to) WHERE g.name = p_group;
          v_read_to := v_to;
          moved := true;
        END LOOP;

        -- Only reading on or parking can move the checkpoint here (handing out never does).
        IF moved OR parked_count > 0 THEN
          PERFORM ordinal_group_advance(p_group);
        END IF;
        watching := EXISTS (SELECT 1 FROM consumer_group_watch w WHERE w.group_name = p_group);
      END
      $fn$`);
    // CREATE OR REPLACE drops the function's settings: pin its search_path again.
    await pinFunction(
      queryRunner,
      'ordinal_group_claim(text, text, integer, double precision, text, jsonb, bigint, integer, integer, text, text[], text[], text, double precision)',
      'A consumer group member’s fetch in one round trip: locks the group, joins or renews the member, expires deliveries past their deadline or epoch (parking after maxDeliveries; nothing more when none), removes members dead for longer than p_retention_ms (raising member_epoch_floor), claims up to p_max ready deliveries within maxInFlight (pinned strategies: the oldest of each key; scanning above the checkpoint and the rows added below read_to only), reads the log on up to p_head when they run out, handing the member what it has room for as the read adds it (p_fill, and p_watch for passed positions in concurrent mode, are the caller’s queries, run with EXECUTE; p_fill adds its rows with below_read_to false, those it hands out held, and answers the indices read and those handed) and moves the checkpoint. Queries after the lock see every earlier commit. stale: p_identity is not the group’s source/strategy/keyPath (nothing changed); starved: it had room but nothing to read below p_head.',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX consumer_group_deliveries_deadline_ix ON consumer_group_deliveries (group_name, deadline) WHERE member_id IS NOT NULL`,
    );
    await queryRunner.query(`COMMENT ON INDEX consumer_group_deliveries_deadline_ix IS
      'Deliveries in flight by deadline: those past it, without looking through the others'`);
    await queryRunner.query(`DROP INDEX consumer_group_deliveries_held_ix`);
    await queryRunner.query(
      `CREATE INDEX consumer_group_deliveries_held_ix ON consumer_group_deliveries (group_name, member_id, epoch) WHERE member_id IS NOT NULL`,
    );
    await queryRunner.query(`COMMENT ON INDEX consumer_group_deliveries_held_ix IS
      'Deliveries in flight by member and epoch: a member''s acks and count, and those held under an epoch that is over'`);
    // The advance as GroupAckAfterLock defined it (a SQL function).
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_advance(p_group text) RETURNS bigint
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
    // The claim as GroupClaimHandsOnRead defined it (its up replaces the function only).
    await new GroupClaimHandsOnRead1765200000600().up(queryRunner);
  }
}
