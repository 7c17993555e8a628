import type { SqlQuery } from '@ordinal/pg';
import { readSkippedBetween } from '@ordinal/log/internal';
import { GROUP_TABLES } from '../group-tables.js';

const W = GROUP_TABLES.watch;

/**
 * Watches the positions the group passed without a row, for late arrivals (concurrent
 * ordering): those the log's read after `$1` up to `$2` would pass (`readSkippedBetween`,
 * with an id above every running transaction as `passed_xmax`), for group `$3`, except those
 * it read (`$4`). The text `ordinal_group_claim` runs (EXECUTE … USING) when it reads on.
 */
export const WATCH_PASSED = `INSERT INTO ${W} (group_name, position, passed_xmax)
  SELECT $3::text, s.position::bigint, s.xmax FROM (${readSkippedBetween(0, 0).text}) s
  WHERE s.position::bigint <> ALL ($4::bigint[])
  ON CONFLICT (group_name, position) DO NOTHING`;

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
