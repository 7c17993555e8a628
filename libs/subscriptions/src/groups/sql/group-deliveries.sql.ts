import type { SqlQuery } from '@ordinal/pg';
import { RENDERED_ROW_JSON, TABLES } from '@ordinal/log/internal';
import type { SealedFields } from '@ordinal/log';
import { GROUP_TABLES } from '../group-tables.js';

const D = GROUP_TABLES.deliveries;
const M = GROUP_TABLES.members;
const P = GROUP_TABLES.parked;

/** A delivery handed to a member, with its message as the API's JSON text (rendered by PostgreSQL). */
export interface ClaimedRow {
  index: string;
  attempt: number;
  late: boolean;
  json: string;
  /** The message's sealed personal fields (docs/personal-data.md), else null. */
  personal: SealedFields | null;
}

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
 * Takes back what members hold past its deadline, or under an epoch that is over (the member
 * was declared dead): ready again, or parked once it was delivered `maxDeliveries` times.
 */
export function expireDeliveries(group: string, maxDeliveries: number): SqlQuery {
  return {
    text: `WITH expired AS (
             SELECT d.index FROM ${D} d
             WHERE d.group_name = $1 AND d.member_id IS NOT NULL AND (d.deadline < clock_timestamp() OR NOT EXISTS (
               SELECT 1 FROM ${M} m WHERE m.group_name = d.group_name AND m.member_id = d.member_id AND m.epoch = d.epoch
                 AND m.lease_expires_at >= clock_timestamp()))
           ), gone AS (
             DELETE FROM ${D} d USING expired e WHERE d.group_name = $1 AND d.index = e.index AND d.attempt >= $2
             RETURNING d.index, d.attempt
           ), parked AS (
             INSERT INTO ${P} (group_name, index, reason, attempts)
             SELECT $1, index, 'not acknowledged after ' || attempt || ' deliveries', attempt FROM gone
             ON CONFLICT (group_name, index) DO UPDATE SET reason = EXCLUDED.reason, attempts = EXCLUDED.attempts, parked_at = now()
             RETURNING index
           ), released AS (
             UPDATE ${D} d SET member_id = NULL, epoch = NULL, deadline = NULL
             FROM expired e WHERE d.group_name = $1 AND d.index = e.index AND d.attempt < $2
             RETURNING d.index
           )
           SELECT (SELECT count(*) FROM parked)::int AS parked, (SELECT count(*) FROM released)::int AS released`,
    values: [group, maxDeliveries],
  };
}

/** How many events a member holds under its epoch. */
export function countHeld(group: string, memberId: string, epoch: number): SqlQuery {
  return {
    text: `SELECT count(*)::int AS held FROM ${D} WHERE group_name = $1 AND member_id = $2 AND epoch = $3`,
    values: [group, memberId, epoch],
  };
}

/** Ready deliveries a claim may take, and whether more than that are ready (fill the buffer?). */
export function countReady(group: string): SqlQuery {
  return {
    text: `SELECT count(*) FILTER (WHERE member_id IS NULL)::int AS ready, count(*)::int AS outstanding
           FROM ${D} WHERE group_name = $1`,
    values: [group],
  };
}

/**
 * Hands up to `limit` ready deliveries, lowest index first, to a member for `ackTimeoutMs`.
 * `pinned`: only the oldest outstanding delivery of each key is eligible (the next of a key
 * waits until the one before it is done); deliveries without a key are always eligible.
 */
export function claimDeliveries(
  group: string,
  limit: number,
  memberId: string,
  epoch: number,
  ackTimeoutMs: number,
  pinned: boolean,
): SqlQuery {
  const keyed = pinned
    ? `AND (d.key IS NULL OR NOT EXISTS (SELECT 1 FROM ${D} e WHERE e.group_name = $1 AND e.key = d.key AND e.index < d.index))`
    : '';
  return {
    text: `WITH picked AS (
             SELECT d.index FROM ${D} d WHERE d.group_name = $1 AND d.member_id IS NULL ${keyed}
             ORDER BY d.index LIMIT $2
           ), claimed AS (
             UPDATE ${D} d SET member_id = $3, epoch = $4, attempt = d.attempt + 1,
               deadline = clock_timestamp() + $5 * interval '1 millisecond'
             FROM picked WHERE d.group_name = $1 AND d.index = picked.index
             RETURNING d.index AS claimed_index, d.attempt, d.late
           )
           -- The message as the API renders it (unqualified columns are the message's); one hidden
           -- since the group read it comes as its tombstone, never with its body.
           SELECT c.claimed_index::text AS index, c.attempt, c.late, ${RENDERED_ROW_JSON} AS json, personal
           FROM claimed c JOIN ${TABLES.messages} ON ${TABLES.messages}.index = c.claimed_index
           ORDER BY c.claimed_index`,
    values: [group, limit, memberId, epoch, ackTimeoutMs],
  };
}

/**
 * An ack in one round trip (`ordinal_group_ack`, a migration): locks the group's row, renews
 * the member's lease if it still holds `epoch` (not expired), deletes what it holds of
 * `indices`, and moves the checkpoint. Each step after the lock is a query of its own, so it
 * sees every transaction that committed while the ack waited for the lock (one statement
 * would not: its snapshot is taken before it waits). `found` 0: no such group; `renewed` 0:
 * the lease is lost and nothing changed.
 */
export function ackDeliveries(
  group: string,
  memberId: string,
  epoch: number,
  indices: number[],
  leaseMs: number,
): SqlQuery {
  return {
    text: `SELECT found::int AS found, renewed::int AS renewed, moved_to::text AS checkpoint, acked::text[] AS acked
           FROM ordinal_group_ack($1, $2, $3, $4::bigint[], $5)`,
    values: [group, memberId, epoch, indices, leaseMs],
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

/** Figures for status: in flight, ready. */
export function countDeliveries(group: string): SqlQuery {
  return {
    text: `SELECT count(*) FILTER (WHERE member_id IS NOT NULL)::int AS in_flight,
                  count(*) FILTER (WHERE member_id IS NULL)::int AS ready
           FROM ${D} WHERE group_name = $1`,
    values: [group],
  };
}
