import type { SqlQuery } from '@ordinal/pg';
import { RENDERED_ROW_JSON, TABLES } from '@ordinal/log/internal';
import type { SealedFields } from '@ordinal/log';
import type { FillQuery } from './group-fill.sql.js';

const MESSAGES = TABLES.messages;

/** What a fetch's one statement answers: one row per delivery claimed, or one row without one. */
export interface ClaimRow {
  /** 0: no such group. */
  found: number;
  /** 1: the read-on query was built for another definition; nothing changed. */
  stale: number;
  epoch: string | null;
  /** Deliveries parked by the expiry. */
  parked: number;
  /** 1: room was left and nothing could be read below the safe head given. */
  starved: number;
  /** 1: the group watches positions it passed without a row (concurrent ordering). */
  watching: number;
  index: string | null;
  attempt: number | null;
  late: boolean | null;
  /**
   * The message as the API renders it (JSON text); null when the statement's snapshot does not
   * show its row (one that committed while the statement waited for the group: render it again).
   */
  json: string | null;
  /** The message's sealed personal fields (docs/personal-data.md), else null. */
  personal: SealedFields | null;
}

/** A fetch's request as the statement takes it. */
export interface ClaimRequest {
  group: string;
  memberId: string;
  max: number;
  leaseMs: number;
  server: string;
  /** The group's source, strategy and keyPath the read-on query was built for. */
  identity: { source: unknown; strategy: string; keyPath: string | null };
  /** A safe head read before this statement: every row at or below it is visible to the statement. */
  head: number;
  readPage: number;
  readAhead: number;
  fill: FillQuery;
  /** The query that watches passed positions (concurrent ordering, not one category), else null. */
  watch: string | null;
}

/**
 * A member's fetch in one round trip: `ordinal_group_claim` (a migration) locks the group,
 * joins the member, expires, claims and reads the log on in queries of their own (each sees
 * every commit made while it waited for the lock), and this statement renders the claimed
 * messages as the API's JSON (unqualified columns are the message's; one hidden since the group
 * read it comes as its tombstone, never with its body).
 *
 * This statement's own snapshot is taken before the function waits for the lock: it shows every
 * row read on here (at most `head`, final before the statement began), but maybe not a row
 * another fetch read on, or a late arrival found, while it waited; such a delivery comes with
 * `json` null and the caller renders it in a statement of its own (`renderClaimed`).
 */
export function claimForMember(request: ClaimRequest): SqlQuery {
  return {
    text: `SELECT c.group_found::int AS found, c.stale::int AS stale, c.member_epoch::text AS epoch,
             c.parked_count AS parked, c.starved::int AS starved, c.watching::int AS watching,
             r.claimed_index::text AS index, r.claimed_attempt AS attempt, r.claimed_late AS late,
             r.json, r.personal
           FROM ordinal_group_claim($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11::text[], $12::text[], $13) c
           LEFT JOIN LATERAL (
             SELECT u.claimed_index, u.claimed_attempt, u.claimed_late,
               CASE WHEN ${MESSAGES}.index IS NULL THEN NULL ELSE ${RENDERED_ROW_JSON} END AS json,
               ${MESSAGES}.personal
             FROM unnest(c.claimed_indices, c.claimed_attempts, c.claimed_late)
               AS u(claimed_index, claimed_attempt, claimed_late)
             LEFT JOIN ${MESSAGES} ON ${MESSAGES}.index = u.claimed_index
           ) r ON true
           ORDER BY r.claimed_index`,
    values: [
      request.group,
      request.memberId,
      // The room is at most maxInFlight (an integer); a stream asks for "as many as it may hold".
      Math.min(request.max, 2 ** 31 - 1),
      request.leaseMs,
      request.server,
      JSON.stringify(request.identity),
      request.head,
      request.readPage,
      request.readAhead,
      request.fill.text,
      request.fill.source,
      request.fill.keyPath,
      request.watch,
    ],
  };
}

/** Claimed messages the fetch's statement could not see yet, rendered as it renders them. */
export function renderClaimed(indices: number[]): SqlQuery {
  return {
    text: `SELECT index::text AS index, ${RENDERED_ROW_JSON} AS json, personal
           FROM ${MESSAGES} WHERE index = ANY($1::bigint[])`,
    values: [indices],
  };
}
