import type { MigrationInterface, QueryRunner } from 'typeorm';
import { pinFunction } from '@ordinal/pg';
import { GroupAckFound1765200000410 } from './1765200000410-group-ack-found.js';
import { GroupHeldIndexDeadline1765200000900 } from './1765200000900-group-held-index-deadline.js';

/**
 * What a round_robin group hands out as its read-on finds it goes into one row per batch, not
 * one row per event. Every event a group handed out was a row of `consumer_group_deliveries`
 * (a heap tuple and two index entries added by the fetch, then deleted by the ack, a dead tuple
 * until a vacuum), and every claim walked the held rows above the checkpoint to find the ready
 * ones and to count what was outstanding: on four members' batches of 500, about half of the
 * group's PostgreSQL CPU an event (docs/performance.md, "Consumer groups").
 *
 * A row of `consumer_group_batches` is a compressed form of held deliveries: the events one
 * member holds under one epoch, handed out together on their first delivery (attempt 1, no key,
 * not late, no failure), with one deadline. An ack takes its events out of the batch (the row
 * goes with its last). Whatever needs an event's own state turns the batch back into delivery
 * rows, held as they were (`ordinal_group_unbatch`), and goes on as before: the claim does that
 * to every batch whose member died, moved to another epoch or passed the deadline, before its
 * expiry; a nack to the batches holding the events it names. Pinned strategies keep a row per
 * event (a key waits for its earlier events' rows).
 *
 * A new table (empty) and functions: nothing is copied. Deliveries added before stay valid.
 */
export class GroupHandedBatches1765200001000 implements MigrationInterface {
  name = 'GroupHandedBatches1765200001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE consumer_group_batches (
      group_name text NOT NULL,
      member_id text NOT NULL,
      epoch bigint NOT NULL,
      first_index bigint NOT NULL,
      deadline timestamptz NOT NULL,
      indices bigint[] NOT NULL,
      PRIMARY KEY (group_name, member_id, epoch, first_index)
    )`);
    // A batch of up to about a thousand indices stays in its row (8 bytes each), not TOASTed.
    await queryRunner.query(`ALTER TABLE consumer_group_batches SET (toast_tuple_target = 8160)`);
    await queryRunner.query(`COMMENT ON TABLE consumer_group_batches IS
      'Events a consumer group member holds under an epoch, handed out together on their first delivery (round_robin): held deliveries in one row. No foreign key (the group''s delete trigger removes them)'`);
    await queryRunner.query(`COMMENT ON COLUMN consumer_group_batches.group_name IS
      'The consumer group'`);
    await queryRunner.query(`COMMENT ON COLUMN consumer_group_batches.member_id IS
      'The member holding the batch'`);
    await queryRunner.query(`COMMENT ON COLUMN consumer_group_batches.epoch IS
      'The member''s epoch the batch was handed out under: held only while the member is alive in it'`);
    await queryRunner.query(`COMMENT ON COLUMN consumer_group_batches.deadline IS
      'When the batch''s events go to another member unless acknowledged (handed out + ackTimeoutMs)'`);
    await queryRunner.query(`COMMENT ON COLUMN consumer_group_batches.first_index IS
      'The lowest index the batch was handed out with (its key; acks do not change it)'`);
    await queryRunner.query(`COMMENT ON COLUMN consumer_group_batches.indices IS
      'The indices still held, ascending, never empty (the row goes with its last ack)'`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_deleted() RETURNS trigger
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        DELETE FROM consumer_group_deliveries WHERE group_name = OLD.name;
        DELETE FROM consumer_group_batches WHERE group_name = OLD.name;
        RETURN OLD;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_deleted()',
      'Trigger: deletes a deleted consumer group’s deliveries and batches (its members, parked references and watched positions go by their foreign keys), in queries that see every one committed before.',
    );
    await queryRunner.query(`
      CREATE FUNCTION ordinal_group_unbatch(p_group text, p_batches tid[]) RETURNS integer
      LANGUAGE sql VOLATILE AS $fn$
        WITH gone AS (
          DELETE FROM consumer_group_batches b WHERE b.ctid = ANY(p_batches) AND b.group_name = p_group
          RETURNING b.member_id, b.epoch, b.deadline, b.indices
        ), added AS (
          INSERT INTO consumer_group_deliveries (group_name, index, key, late, below_read_to, member_id, epoch, attempt, deadline)
          SELECT p_group, i, NULL, false, false, gone.member_id, gone.epoch, 1, gone.deadline
          FROM gone, unnest(gone.indices) AS i
          RETURNING 1
        )
        SELECT count(*)::int FROM added
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_unbatch(text, tid[])',
      'Turns consumer group batches (by row address) back into delivery rows, held as they were (member, epoch, deadline, attempt 1); returns how many rows. The caller holds the group’s row lock.',
    );
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_advance(p_group text) RETURNS bigint
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_checkpoint bigint;
      BEGIN
        -- LEAST passes over a NULL: the lowest of the deliveries and the batches, either may have none.
        UPDATE consumer_groups g SET checkpoint = GREATEST(g.checkpoint, COALESCE(LEAST(
            (SELECT min(d.index) - 1 FROM consumer_group_deliveries d
              WHERE d.group_name = g.name AND d.index > g.checkpoint),
            (SELECT min(b.indices[1]) - 1 FROM consumer_group_batches b WHERE b.group_name = g.name)),
            g.read_to)), updated_at = now()
        WHERE g.name = p_group RETURNING g.checkpoint INTO v_checkpoint;
        RETURN v_checkpoint;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_advance(text)',
      'Moves a consumer group’s checkpoint to just below its lowest delivery or batched event above it not yet done (or to read_to when none is left), never back; returns it. The caller holds the group’s row lock. PL/pgSQL: its plan is kept for the session.',
    );
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_ack(p_group text, p_member text, p_epoch bigint, p_indices bigint[],
                                        p_lease_ms double precision,
                                        OUT found boolean, OUT renewed boolean, OUT moved_to bigint, OUT acked bigint[])
      LANGUAGE plpgsql VOLATILE
      SET enable_seqscan = off
      SET enable_bitmapscan = off
      SET jit = off
      AS $fn$
      DECLARE
        -- The OUT parameter found by its number: FOUND, the PL/pgSQL variable, shadows its name.
        group_found ALIAS FOR $6;
        v_batch record;
        v_left bigint[];
        v_gone bigint[];
        v_rows bigint[];
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
        -- The member's batches under the epoch (a few): each loses the acknowledged indices, and
        -- goes with its last (a hash of the acknowledged ones, not a search of them per index).
        FOR v_batch IN
          SELECT b.ctid AS at, b.indices FROM consumer_group_batches b
          WHERE b.group_name = p_group AND b.member_id = p_member AND b.epoch = p_epoch
          ORDER BY b.first_index
        LOOP
          SELECT coalesce(array_agg(x.i ORDER BY x.i) FILTER (WHERE a.i IS NULL), '{}'),
                 coalesce(array_agg(x.i ORDER BY x.i) FILTER (WHERE a.i IS NOT NULL), '{}')
            INTO v_left, v_gone
            FROM unnest(v_batch.indices) AS x(i)
            LEFT JOIN (SELECT DISTINCT u.i FROM unnest(p_indices) AS u(i)) a ON a.i = x.i;
          CONTINUE WHEN cardinality(v_gone) = 0;
          IF cardinality(v_left) = 0 THEN
            DELETE FROM consumer_group_batches b WHERE b.ctid = v_batch.at;
          ELSE
            UPDATE consumer_group_batches b SET indices = v_left WHERE b.ctid = v_batch.at;
          END IF;
          -- Batches do not interleave (each read on above the last): in first_index order, acked stays ascending.
          acked := acked || v_gone;
        END LOOP;
        WITH gone AS (
          DELETE FROM consumer_group_deliveries
          WHERE group_name = p_group AND member_id = p_member AND epoch = p_epoch AND index = ANY(p_indices)
          RETURNING index)
        SELECT coalesce(array_agg(index ORDER BY index), '{}') INTO v_rows FROM gone;
        IF cardinality(v_rows) > 0 THEN
          acked := ARRAY(SELECT u.i FROM unnest(acked || v_rows) AS u(i) ORDER BY u.i);
        END IF;
        moved_to := ordinal_group_advance(p_group);
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_ack(text, text, bigint, bigint[], double precision)',
      'A consumer group member’s ack in one round trip: locks the group, renews the member’s lease if it still holds the epoch, takes what it holds of the indices out of its batches and deliveries and moves the checkpoint (queries after the lock see every earlier commit). found: the group exists; renewed: the lease held (else nothing changed).',
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
        v_stale tid[];
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
        -- A batch stays one while its member lives under the batch's epoch and its deadline has
        -- not passed; any other goes back to delivery rows, held as they were, for the expiry
        -- below (the same four cases, by the same clock). A group has a few batches.
        SELECT coalesce(array_agg(b.ctid), '{}') INTO v_stale FROM consumer_group_batches b
          WHERE b.group_name = p_group AND NOT EXISTS (
            SELECT 1 FROM consumer_group_members m
            WHERE m.group_name = b.group_name AND m.member_id = b.member_id AND m.epoch = b.epoch
              AND m.lease_expires_at >= v_now AND b.deadline >= v_now);
        IF cardinality(v_stale) > 0 THEN
          PERFORM ordinal_group_unbatch(p_group, v_stale);
        END IF;
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
        v_held := v_held + (SELECT coalesce(sum(cardinality(b.indices)), 0)::int FROM consumer_group_batches b
          WHERE b.group_name = p_group AND b.member_id = p_member AND b.epoch = member_epoch);
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
          v_outstanding := v_outstanding + (SELECT coalesce(sum(cardinality(b.indices)), 0)::int
            FROM consumer_group_batches b WHERE b.group_name = p_group);
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
      'A consumer group member’s fetch in one round trip: locks the group, joins or renews the member, turns the batches no longer held as they were (member dead or on another epoch, deadline passed) back into delivery rows, expires deliveries past their deadline or epoch (parking after maxDeliveries; nothing more when none), removes members dead for longer than p_retention_ms (raising member_epoch_floor), claims up to p_max ready deliveries within maxInFlight (counting what the member’s batches hold) (pinned strategies: the oldest of each key; scanning above the checkpoint and the rows added below read_to only), reads the log on up to p_head when they run out, handing the member what it has room for as the read adds it (p_fill, and p_watch for passed positions in concurrent mode, are the caller’s queries, run with EXECUTE; p_fill adds its rows with below_read_to false, those it hands out held (round_robin: as one row of consumer_group_batches), and answers the indices read and those handed) and moves the checkpoint. Queries after the lock see every earlier commit. stale: p_identity is not the group’s source/strategy/keyPath (nothing changed); starved: it had room but nothing to read below p_head.',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Batches back to delivery rows first: the functions before know none.
    await queryRunner.query(`SELECT ordinal_group_unbatch(b.group_name, array_agg(b.ctid))
      FROM consumer_group_batches b GROUP BY b.group_name`);
    // The claim and the advance as GroupHeldIndexDeadline defined them (its down, then its up).
    const heldIndexDeadline = new GroupHeldIndexDeadline1765200000900();
    await heldIndexDeadline.down(queryRunner);
    await heldIndexDeadline.up(queryRunner);
    await new GroupAckFound1765200000410().up(queryRunner);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ordinal_group_deleted() RETURNS trigger
      LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        DELETE FROM consumer_group_deliveries WHERE group_name = OLD.name;
        RETURN OLD;
      END
      $fn$`);
    await pinFunction(
      queryRunner,
      'ordinal_group_deleted()',
      'Trigger: deletes a deleted consumer group’s deliveries (its members, parked references and watched positions go by their foreign keys), in a query that sees every delivery committed before.',
    );
    await queryRunner.query(`DROP FUNCTION ordinal_group_unbatch(text, tid[])`);
    await queryRunner.query(`DROP TABLE consumer_group_batches`);
  }
}
