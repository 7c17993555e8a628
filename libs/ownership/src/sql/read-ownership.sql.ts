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

/** The lease rows of some groups, with whether each is live now. */
export function readLeases(groups: string[]): SqlQuery {
  return {
    text: `SELECT name, group_name, owner, (owner IS NOT NULL AND expires_at > clock_timestamp()) AS live
             FROM ${OWNERSHIP_TABLES.leases} WHERE group_name = ANY($1::text[])`,
    values: [groups],
  };
}

/** The live processes running any of these groups. */
export function readMembers(groups: string[]): SqlQuery {
  return {
    text: `SELECT owner, groups FROM ${OWNERSHIP_TABLES.processes}
            WHERE expires_at > clock_timestamp() AND groups && $1::text[]`,
    values: [groups],
  };
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
