import type { SqlQuery } from '@ordinal/pg';
import { GROUP_TABLES } from '../group-tables.js';

const D = GROUP_TABLES.deliveries;
const P = GROUP_TABLES.parked;

/** A parked reference as listed. */
export interface GroupParkedRow {
  index: string;
  reason: string;
  attempts: number;
  parked_at: Date;
}

/** A group's parked references, oldest index first. */
export function listGroupParked(group: string, limit: number): SqlQuery {
  return {
    text: `SELECT p.index::text AS index, p.reason, p.attempts, p.parked_at FROM ${P} p WHERE p.group_name = $1 ORDER BY p.index LIMIT $2`,
    values: [group, limit],
  };
}

export function countGroupParked(group: string): SqlQuery {
  return {
    text: `SELECT count(*)::int AS parked FROM ${P} WHERE group_name = $1`,
    values: [group],
  };
}

/**
 * Puts up to `limit` parked events (oldest first) back as ready deliveries, without a key (a
 * replayed event already broke its key's order; it must not hold the key's later events) and
 * with their attempts starting over. The checkpoint is not touched: it counted them as done.
 */
export function replayGroupParked(group: string, limit: number): SqlQuery {
  return {
    text: `WITH picked AS (
             DELETE FROM ${P} p WHERE p.group_name = $1 AND p.index IN (
               SELECT index FROM ${P} WHERE group_name = $1 ORDER BY index LIMIT $2)
             RETURNING p.index
           )
           INSERT INTO ${D} (group_name, index, key, late) SELECT $1, index, NULL, false FROM picked
           ON CONFLICT (group_name, index) DO NOTHING RETURNING index::text AS index`,
    values: [group, limit],
  };
}
