import { OWNERSHIP_TABLES } from '@ordinal/ownership';
import { type SqlQuery } from '@ordinal/pg';
import { SUBSCRIPTION_TABLES } from '../subscriptions.constants.js';

/** One consumer as the database knows it: lease, owner process, checkpoint, parked count. */
export interface DirectoryRow {
  name: string;
  kind: string;
  group_name: string;
  owner: string | null;
  owner_live: boolean;
  pid: number | null;
  host: string | null;
  heartbeat_age_ms: number | null;
  position: string | null;
  live_from: string | null;
  state: string | null;
  last_error: string | null;
  stream: string | null;
  progress_age_ms: number | null;
  parked: number;
}

/**
 * Every subscription and projection (and partition) any process registered on this database
 * (interfaces are left out: `GET /api/interfaces` shows those), with the owner's process id,
 * host and heartbeat age, and the checkpoint's position, state and error.
 */
export function readDirectory(): SqlQuery {
  const L = OWNERSHIP_TABLES.leases;
  const P = OWNERSHIP_TABLES.processes;
  const C = SUBSCRIPTION_TABLES.checkpoints;
  const K = SUBSCRIPTION_TABLES.parked;
  return {
    text: `SELECT l.name, l.kind, l.group_name, l.owner,
                  (l.owner IS NOT NULL AND l.expires_at > clock_timestamp()) AS owner_live,
                  p.pid, p.host,
                  (extract(epoch FROM clock_timestamp() - l.heartbeat_at) * 1000)::float8 AS heartbeat_age_ms,
                  c.position::text AS position, c.live_from::text AS live_from, c.state, c.last_error, c.stream,
                  (extract(epoch FROM clock_timestamp() - c.progressed_at) * 1000)::float8 AS progress_age_ms,
                  (SELECT count(*)::int FROM ${K} k WHERE k.consumer = l.name) AS parked
             FROM ${L} l
             LEFT JOIN ${P} p ON p.owner = l.owner
             LEFT JOIN ${C} c ON c.name = l.name
            WHERE l.kind <> 'interface'
            ORDER BY l.group_name, l.name`,
    values: [],
  };
}

/** Records what a checkpoint reads (shown to processes that do not run it). */
export function describeCheckpoint(name: string, stream: string): SqlQuery {
  return {
    text: `UPDATE ${SUBSCRIPTION_TABLES.checkpoints} SET stream = $2 WHERE name = $1 AND stream IS DISTINCT FROM $2`,
    values: [name, stream],
  };
}

/** The position of some checkpoints (waiting for a consumer another process runs). */
export function readPositions(names: string[]): SqlQuery {
  return {
    text: `SELECT name, position::text AS position FROM ${SUBSCRIPTION_TABLES.checkpoints} WHERE name = ANY($1::text[])`,
    values: [names],
  };
}
