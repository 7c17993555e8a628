import type { LogReader } from '@ordinal/log';
import { execute, toPosition, type SqlRunner } from '@ordinal/pg';
import type { ConsumerGroupDefinition } from './group-definition.js';
import type { ConsumerGroupStatus } from './group-status.js';
import { readGroups, type GroupRow } from './sql/group-rows.sql.js';
import { listMembers, type MemberRow } from './sql/group-members.sql.js';
import { countDeliveries } from './sql/group-deliveries.sql.js';
import { countGroupParked } from './sql/group-parked.sql.js';

/** The state of one group (`name`) or of every group (null), read without locks. */
export async function readGroupStatus(
  runner: SqlRunner,
  reader: LogReader,
  name: string | null,
): Promise<ConsumerGroupStatus[]> {
  const rows = await execute<GroupRow>(runner, readGroups(name));
  if (rows.length === 0) return [];
  const head = await reader.safeHead();
  const statuses: ConsumerGroupStatus[] = [];
  for (const row of rows) {
    const members = await execute<MemberRow>(runner, listMembers(row.name));
    const [counts] = await execute<{ in_flight: number; ready: number }>(
      runner,
      countDeliveries(row.name),
    );
    const [{ parked }] = await execute<{ parked: number }>(runner, countGroupParked(row.name));
    const checkpoint = toPosition(row.checkpoint);
    const memberStatus = members.map((m) => ({
      memberId: m.member_id,
      epoch: toPosition(m.epoch),
      alive: m.alive,
      inFlight: m.alive ? toPosition(m.in_flight) : 0,
      server: m.server,
      leaseExpiresAt: new Date(m.lease_expires_at).toISOString(),
      lastSeenAt: new Date(m.last_seen_at).toISOString(),
    }));
    statuses.push({
      group: row.name,
      definition: row.definition as ConsumerGroupDefinition,
      state: memberStatus.some((m) => m.alive) ? 'active' : 'idle',
      members: memberStatus,
      checkpoint,
      head,
      lag: Math.max(0, head - checkpoint),
      inFlight: counts.in_flight,
      ready: counts.ready,
      parked,
    });
  }
  return statuses;
}
