import type { SqlQuery } from '@ordinal/pg';
import { GROUP_TABLES } from '../group-tables.js';

const W = GROUP_TABLES.watch;

/** Positions the group passed without a row, to watch for late arrivals (with the read's snapshot xmax). */
export function insertWatch(group: string, positions: number[], xmax: string): SqlQuery {
  return {
    text: `INSERT INTO ${W} (group_name, position, passed_xmax) SELECT $1, p, $3 FROM unnest($2::bigint[]) AS p
           ON CONFLICT (group_name, position) DO NOTHING`,
    values: [group, positions, xmax],
  };
}

export function readWatch(group: string): SqlQuery {
  return {
    text: `SELECT w.position::text AS position, w.passed_xmax AS xmax FROM ${W} w WHERE w.group_name = $1 ORDER BY w.position`,
    values: [group],
  };
}

export function deleteWatch(group: string, positions: number[]): SqlQuery {
  return {
    text: `DELETE FROM ${W} WHERE group_name = $1 AND position = ANY($2::bigint[])`,
    values: [group, positions],
  };
}
