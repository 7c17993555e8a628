import type { SqlQuery } from '../../sql/sql-query.js';
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
