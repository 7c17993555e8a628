import type { SqlQuery } from '@ordinal/pg';
import { OWNERSHIP_TABLES } from '../ownership.constants.js';

/** A lease row as the planner needs it. */
export interface LeaseStateRow {
  name: string;
  group_name: string;
  owner: string | null;
  /** Owned and not expired by the database's clock. */
  live: boolean;
}

/** A row of `readGroups`: a lease (`member` false) or a live process running the groups (`member` true). */
export interface GroupStateRow {
  member: boolean;
  /** A lease's consumer; null for a process. */
  name: string | null;
  group_name: string | null;
  /** A lease's owner, or the process. */
  owner: string | null;
  /** A lease: owned and not expired by the database's clock; a process: true. */
  live: boolean;
  /** A process: the groups it runs. */
  groups: string[] | null;
}

/**
 * What a rebalance plans from, in one statement (one round trip a tick, one snapshot): the
 * lease rows of some groups, with whether each is live now, and the live processes running
 * any of them.
 */
export function readGroups(groups: string[]): SqlQuery {
  return {
    text: `SELECT false AS member, name, group_name, owner,
                  (owner IS NOT NULL AND expires_at > clock_timestamp()) AS live, NULL::text[] AS groups
             FROM ${OWNERSHIP_TABLES.leases} WHERE group_name = ANY($1::text[])
           UNION ALL
           SELECT true, NULL, NULL, owner, true, groups FROM ${OWNERSHIP_TABLES.processes}
            WHERE expires_at > clock_timestamp() AND groups && $1::text[]`,
    values: [groups],
  };
}

/** The lease rows of `readGroups`, as the planner needs them. */
export function leasesOf(rows: GroupStateRow[]): LeaseStateRow[] {
  return rows
    .filter((r) => !r.member)
    .map((r) => ({ name: r.name!, group_name: r.group_name!, owner: r.owner, live: r.live }));
}

/** The live processes of `readGroups`. */
export function membersOf(rows: GroupStateRow[]): { owner: string; groups: string[] }[] {
  return rows.filter((r) => r.member).map((r) => ({ owner: r.owner!, groups: r.groups ?? [] }));
}

/** A lease row with its owner process and what the owner last recorded (OwnedConsumer.progress). */
export interface ConsumerLeaseRow {
  name: string;
  group_name: string;
  owner: string | null;
  live: boolean;
  pid: number | null;
  host: string | null;
  heartbeat_age_ms: number | null;
  progress: unknown;
  progress_age_ms: number | null;
}

/** Every lease of one kind (`interface`, say) any process registered, with its owner process. */
export function readConsumerLeases(kind: string): SqlQuery {
  return {
    text: `SELECT l.name, l.group_name, l.owner, (l.owner IS NOT NULL AND l.expires_at > clock_timestamp()) AS live,
                  p.pid, p.host,
                  (extract(epoch FROM clock_timestamp() - l.heartbeat_at) * 1000)::float8 AS heartbeat_age_ms,
                  l.progress,
                  (extract(epoch FROM clock_timestamp() - l.progress_at) * 1000)::float8 AS progress_age_ms
             FROM ${OWNERSHIP_TABLES.leases} l
             LEFT JOIN ${OWNERSHIP_TABLES.processes} p ON p.owner = l.owner
            WHERE l.kind = $1
            ORDER BY l.name`,
    values: [kind],
  };
}
