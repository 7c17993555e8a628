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
  /**
   * Live, but more than half its time to live has passed since its last heartbeat (a healthy
   * owner renews every third of it): it missed a heartbeat and may be dead.
   */
  owner_stale: boolean;
  /** Milliseconds until the owner's lease runs out (null when not owned). */
  lease_expires_in_ms: number | null;
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
  /** The other live processes that registered this consumer's group (they take over if the owner goes). */
  standbys: StandbyRow[];
}

/** A live process standing by for a consumer (json_build_object in readDirectory). */
export interface StandbyRow {
  id: string;
  pid: number;
  host: string;
  heartbeatAgeMs: number;
}

/**
 * Every subscription and projection (and partition) any process registered on this database
 * (interfaces are left out: `GET /api/interfaces` shows those), with the owner's process id,
 * host and heartbeat age, whether its heartbeat is overdue and when its lease runs out, the
 * live processes standing by (every other live process whose heartbeat lists the group), and
 * the checkpoint's position, state and error. A lease's time to live is
 * `expires_at - heartbeat_at` (both set by one statement at each renewal), so staleness is
 * judged by the owner's own timings, whatever this process's are.
 */
export function readDirectory(): SqlQuery {
  const L = OWNERSHIP_TABLES.leases;
  const P = OWNERSHIP_TABLES.processes;
  const C = SUBSCRIPTION_TABLES.checkpoints;
  const K = SUBSCRIPTION_TABLES.parked;
  return {
    text: `SELECT l.name, l.kind, l.group_name, l.owner,
                  (l.owner IS NOT NULL AND l.expires_at > clock_timestamp()) AS owner_live,
                  (l.owner IS NOT NULL AND l.expires_at > clock_timestamp()
                    AND clock_timestamp() > l.heartbeat_at + (l.expires_at - l.heartbeat_at) / 2) AS owner_stale,
                  CASE WHEN l.owner IS NULL THEN NULL
                       ELSE (extract(epoch FROM l.expires_at - clock_timestamp()) * 1000)::float8 END AS lease_expires_in_ms,
                  p.pid, p.host,
                  (extract(epoch FROM clock_timestamp() - l.heartbeat_at) * 1000)::float8 AS heartbeat_age_ms,
                  c.position::text AS position, c.live_from::text AS live_from, c.state, c.last_error, c.stream,
                  (extract(epoch FROM clock_timestamp() - c.progressed_at) * 1000)::float8 AS progress_age_ms,
                  (SELECT count(*)::int FROM ${K} k WHERE k.consumer = l.name) AS parked,
                  (SELECT coalesce(json_agg(json_build_object(
                            'id', s.owner, 'pid', s.pid, 'host', s.host,
                            'heartbeatAgeMs', round(extract(epoch FROM clock_timestamp() - s.heartbeat_at) * 1000))
                          ORDER BY s.started_at, s.owner), '[]'::json)
                     FROM ${P} s
                    WHERE s.expires_at > clock_timestamp() AND l.group_name = ANY(s.groups)
                      AND s.owner IS DISTINCT FROM
                          CASE WHEN l.expires_at > clock_timestamp() THEN l.owner END) AS standbys
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
