import type { SqlQuery } from '@ordinal/pg';
import { GROUP_TABLES } from '../group-tables.js';

const D = GROUP_TABLES.deliveries;
const B = GROUP_TABLES.batches;
const G = GROUP_TABLES.groups;
const P = GROUP_TABLES.parked;

/** Adds events read from the log (or arrived late) as ready deliveries. */
export function insertDeliveries(
  group: string,
  indices: number[],
  keys: (string | null)[],
  late: boolean,
): SqlQuery {
  return {
    text: `INSERT INTO ${D} (group_name, index, key, late)
           SELECT $1, t.i, t.k, $4 FROM unnest($2::bigint[], $3::text[]) AS t(i, k)
           ON CONFLICT (group_name, index) DO NOTHING`,
    values: [group, indices, keys, late],
  };
}

/**
 * An ack in one round trip (`ordinal_group_ack`, a migration): locks the group's row, renews
 * the member's lease if it still holds `epoch` (not expired), deletes what it holds of
 * `indices`, and moves the checkpoint. Each step after the lock is a query of its own, so it
 * sees every transaction that committed while the ack waited for the lock (one statement
 * would not: its snapshot is taken before it waits). `found` 0: no such group; `renewed` 0:
 * the lease is lost and nothing changed; `acked`: the indices taken, ascending, comma-separated
 * (a batch's hundreds as one text, not an array parsed element by element).
 */
export function ackDeliveries(
  group: string,
  memberId: string,
  epoch: number,
  indices: number[],
  leaseMs: number,
): SqlQuery {
  return {
    text: `SELECT found::int AS found, renewed::int AS renewed, moved_to::text AS checkpoint, array_to_string(acked, ',') AS acked
           FROM ordinal_group_ack($1, $2, $3, $4::bigint[], $5)`,
    values: [group, memberId, epoch, indices, leaseMs],
  };
}

/**
 * Turns the member's batches under `epoch` that hold any of `indices` back into delivery rows,
 * held as they were, so that a nack finds each event's own row (`ordinal_group_unbatch`). Run
 * under the group's lock, before the nack.
 */
export function unbatchDeliveries(
  group: string,
  memberId: string,
  epoch: number,
  indices: number[],
): SqlQuery {
  return {
    text: `SELECT ordinal_group_unbatch($1, ARRAY(
             SELECT b.ctid FROM ${B} b
             WHERE b.group_name = $1 AND b.member_id = $2 AND b.epoch = $3 AND b.indices && $4::bigint[])) AS rows`,
    values: [group, memberId, epoch, indices],
  };
}

/** What a nack does to the deliveries the member holds. */
export interface NackPlan {
  action: 'retry' | 'park' | 'skip';
  reason: string;
  maxDeliveries: number;
  parkAfter: number;
}

/**
 * Gives back what the member holds of `indices`: `skip` counts them done, `park` parks them
 * with the reason, `retry` makes them ready again, or parks one that failed `parkAfter` times
 * or was delivered `maxDeliveries` times. Returns the indices the member held.
 */
export function nackDeliveries(
  group: string,
  memberId: string,
  epoch: number,
  indices: number[],
  plan: NackPlan,
): SqlQuery {
  return {
    text: `WITH held AS (
             SELECT index FROM ${D} WHERE group_name = $1 AND member_id = $2 AND epoch = $3 AND index = ANY($4::bigint[])
           ), gone AS (
             DELETE FROM ${D} d USING held h WHERE d.group_name = $1 AND d.index = h.index
               AND ($5 <> 'retry' OR d.failures + 1 >= $6 OR d.attempt >= $7)
             RETURNING d.index, d.attempt
           ), parked AS (
             INSERT INTO ${P} (group_name, index, reason, attempts)
             SELECT $1, index, $8, attempt FROM gone WHERE $5 <> 'skip'
             ON CONFLICT (group_name, index) DO UPDATE SET reason = EXCLUDED.reason, attempts = EXCLUDED.attempts, parked_at = now()
             RETURNING index
           ), retried AS (
             UPDATE ${D} d SET member_id = NULL, epoch = NULL, deadline = NULL, failures = d.failures + 1, last_error = $8
             FROM held h WHERE d.group_name = $1 AND d.index = h.index AND $5 = 'retry' AND d.failures + 1 < $6 AND d.attempt < $7
             RETURNING d.index
           )
           SELECT held.index::text AS index, (SELECT count(*) FROM parked)::int AS parked FROM held ORDER BY held.index`,
    values: [
      group,
      memberId,
      epoch,
      indices,
      plan.action,
      plan.parkAfter,
      plan.maxDeliveries,
      plan.reason.slice(0, 4000),
    ],
  };
}

/**
 * Figures for status: in flight (held rows and what batches hold), ready. The deliveries above the checkpoint and those added
 * below read_to (the only ones that can be at or below it), as the claim looks for them: not
 * through the acknowledged rows a vacuum has not removed yet (a count of the whole group walked
 * them all, as often as status was asked for).
 */
export function countDeliveries(group: string): SqlQuery {
  return {
    text: `WITH g AS (SELECT checkpoint FROM ${G} WHERE name = $1)
           SELECT (count(*) FILTER (WHERE member_id IS NOT NULL)
                   + (SELECT coalesce(sum(cardinality(b.indices)), 0) FROM ${B} b WHERE b.group_name = $1))::int AS in_flight,
                  count(*) FILTER (WHERE member_id IS NULL)::int AS ready
           FROM (SELECT d.member_id FROM ${D} d, g WHERE d.group_name = $1 AND d.index > g.checkpoint
                 UNION ALL
                 SELECT d.member_id FROM ${D} d, g
                 WHERE d.group_name = $1 AND d.below_read_to AND d.index <= g.checkpoint) live`,
    values: [group],
  };
}
