import type { SqlQuery } from '@ordinal/pg';
import { RENDERED_ROW_JSON, TABLES, atPositions } from '@ordinal/log/internal';
import type { SealedFields } from '@ordinal/log';
import type { FillQuery } from './group-fill.sql.js';

const MESSAGES = TABLES.messages;

/** What a fetch's one statement answers: one row, the deliveries claimed as lists. */
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
  /** The claimed indices, comma-separated ('' for none), not in order; `attempts` and `late` (t/f) go with them. */
  indices: string;
  attempts: string;
  late: string;
}

/** A delivery a claim handed out. */
export interface ClaimedDelivery {
  index: number;
  attempt: number;
  late: boolean;
}

/**
 * The deliveries of a claim's row, by index. The lists come as text, not as a row per delivery
 * (nine columns, five repeated, for each of a batch of hundreds: parsing them cost the server
 * more than the lists do).
 */
export function claimedDeliveries(row: ClaimRow): ClaimedDelivery[] {
  if (row.indices === '') return [];
  const indices = row.indices.split(',');
  const attempts = row.attempts.split(',');
  const late = row.late.split(',');
  return indices
    .map((index, i) => ({
      index: Number(index),
      attempt: Number(attempts[i]),
      late: late[i] === 't',
    }))
    .sort((a, b) => a.index - b.index);
}

/** A claimed message as the API renders it. */
export interface RenderedRow {
  index: string;
  /** The message as the API renders it (JSON text; a hidden one as its tombstone). */
  json: string;
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
  /** Members dead (lease expired) for longer than this are removed (ms). */
  retentionMs: number;
}

/**
 * A member's claim in one round trip: `ordinal_group_claim` (a migration) locks the group,
 * joins the member, expires, claims and reads the log on in queries of their own (each sees
 * every commit made while it waited for the lock). It answers the claimed indices only: the
 * messages are rendered by `renderClaimed`, after the group's lock is released. Rendered here,
 * they would come from this statement's snapshot, taken before the lock wait, which shows
 * neither a row committed meanwhile nor a delete that hid one (its body would go out); and the
 * rendering, the costly part, would hold the group from every other member.
 */
export function claimForMember(request: ClaimRequest): SqlQuery {
  return {
    text: `SELECT c.group_found::int AS found, c.stale::int AS stale, c.member_epoch::text AS epoch,
             c.parked_count AS parked, c.starved::int AS starved, c.watching::int AS watching,
             array_to_string(c.claimed_indices, ',') AS indices,
             array_to_string(c.claimed_attempts, ',') AS attempts,
             array_to_string(c.claimed_late, ',') AS late
           FROM ordinal_group_claim($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11::text[], $12::text[], $13, $14) c`,
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
      request.retentionMs,
    ],
  };
}

/**
 * Claimed messages as the API renders them (unqualified columns are the message's; one hidden
 * since the group read it comes as its tombstone, never with its body), in a statement of its
 * own after the claim committed: it sees every change committed before it. A batch is almost
 * always a run of neighbouring positions, read as its range (`atPositions`).
 */
export function renderClaimed(indices: number[]): SqlQuery & { name: string } {
  const at = atPositions(indices)!;
  return {
    // A prepared statement's name, one per shape of the text (a run's range, or a sparse list).
    name: at.where.includes('index + 0') ? 'ordinal-group-render-run' : 'ordinal-group-render-list',
    text: `SELECT index::text AS index, ${RENDERED_ROW_JSON} AS json, personal
           FROM (SELECT * FROM ${MESSAGES} WHERE ordinal_require_hot($2::bigint, $3::bigint)) AS ${MESSAGES}
           WHERE ${at.where}`,
    values: at.values,
  };
}
