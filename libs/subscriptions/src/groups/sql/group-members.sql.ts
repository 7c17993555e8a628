import type { SqlQuery } from '@ordinal/pg';
import { GROUP_TABLES } from '../group-tables.js';

const M = GROUP_TABLES.members;
const D = GROUP_TABLES.deliveries;
const B = GROUP_TABLES.batches;

/** A member as status shows it. */
export interface MemberRow {
  member_id: string;
  epoch: string;
  alive: boolean;
  lease_expires_at: Date;
  server: string;
  last_seen_at: Date;
  in_flight: string;
}

/** Renews a member's lease when it still holds `epoch` and the lease has not expired; no row when its lease is lost. */
export function renewMember(
  group: string,
  memberId: string,
  epoch: number,
  leaseMs: number,
): SqlQuery {
  return {
    text: `UPDATE ${M} SET last_seen_at = now(),
             lease_expires_at = GREATEST(lease_expires_at, clock_timestamp() + $4 * interval '1 millisecond')
           WHERE group_name = $1 AND member_id = $2 AND epoch = $3 AND lease_expires_at >= clock_timestamp()
           RETURNING member_id`,
    values: [group, memberId, epoch, leaseMs],
  };
}

/** Every member of a group with what it holds (in delivery rows and batches), live ones first. */
export function listMembers(group: string): SqlQuery {
  return {
    text: `SELECT m.member_id, m.epoch::text AS epoch, m.lease_expires_at >= clock_timestamp() AS alive,
             m.lease_expires_at, m.server, m.last_seen_at,
             ((SELECT count(*) FROM ${D} d WHERE d.group_name = m.group_name AND d.member_id = m.member_id AND d.epoch = m.epoch)
              + (SELECT coalesce(sum(cardinality(b.indices)), 0) FROM ${B} b
                 WHERE b.group_name = m.group_name AND b.member_id = m.member_id AND b.epoch = m.epoch))::text AS in_flight
           FROM ${M} m WHERE m.group_name = $1 ORDER BY alive DESC, m.member_id`,
    values: [group],
  };
}
