import { OWNERSHIP_TABLES } from '@ordinal/ownership';
import type { SqlQuery } from '@ordinal/pg';
import { SUBSCRIPTION_TABLES } from '@ordinal/subscriptions/internal';

/** Where a build's consumers are: `<group>` or its partitions `<group>#<n>`. */
export interface GroupPositionsRow {
  lowest: string | null;
  highest: string | null;
  live_owner: boolean;
}

const MEMBER = `(c.name = $1 OR (left(c.name, length($1) + 1) = $1 || '#' AND substr(c.name, length($1) + 2) ~ '^[0-9]+$'))`;

/**
 * The lowest and highest checkpoint of a consumer group (a build's partitions), and whether a
 * live process holds one of its leases (it runs the build).
 */
export function readGroupPositions(group: string): SqlQuery {
  return {
    text: `SELECT (SELECT min(c.position)::text FROM ${SUBSCRIPTION_TABLES.checkpoints} c WHERE ${MEMBER}) AS lowest,
                  (SELECT max(c.position)::text FROM ${SUBSCRIPTION_TABLES.checkpoints} c WHERE ${MEMBER}) AS highest,
                  EXISTS (SELECT 1 FROM ${OWNERSHIP_TABLES.leases} l
                           WHERE l.group_name = $1 AND l.owner IS NOT NULL AND l.expires_at > clock_timestamp()) AS live_owner`,
    values: [group],
  };
}

/** Sets the replay boundary of a group's checkpoints (what status shows after a hand-over). */
export function setGroupLiveFrom(group: string, liveFrom: number): SqlQuery {
  return {
    text: `UPDATE ${SUBSCRIPTION_TABLES.checkpoints} c SET live_from = $2 WHERE ${MEMBER}`,
    values: [group, liveFrom],
  };
}

/** Forgets a retired build's checkpoints and parked messages (its tables are dropped beside). */
export function forgetGroup(group: string): SqlQuery[] {
  return [
    {
      text: `DELETE FROM ${SUBSCRIPTION_TABLES.parked} c WHERE ${MEMBER.replace(/c\.name/g, 'c.consumer')}`,
      values: [group],
    },
    { text: `DELETE FROM ${SUBSCRIPTION_TABLES.checkpoints} c WHERE ${MEMBER}`, values: [group] },
    { text: `DELETE FROM ${OWNERSHIP_TABLES.leases} WHERE group_name = $1`, values: [group] },
  ];
}
