import type { SqlQuery } from '@ordinal/pg';
import { OWNERSHIP_TABLES } from '../ownership.constants.js';

/**
 * One heartbeat of a process: its own row (which groups it runs, so peers count it when they
 * share the work out) and every lease it holds, renewed by `ttlMs` from the statement's start.
 * Both expire at the same instant, so a dead process's membership and leases end together.
 * A lease already expired is not renewed (a peer may be claiming it): it is lost, and the
 * names not returned tell the caller which. `progress` (lease name → what its consumer reports)
 * is stored on those leases (see OwnedConsumer.progress).
 */
export function heartbeat(
  owner: string,
  pid: number,
  host: string,
  ttlMs: number,
  groups: string[],
  held: string[],
  progress: Record<string, unknown> = {},
): SqlQuery {
  return {
    text: `WITH me AS (
             INSERT INTO ${OWNERSHIP_TABLES.processes} (owner, pid, host, expires_at, groups)
             VALUES ($1, $2, $3, now() + $4::int * interval '1 millisecond', $5::text[])
             ON CONFLICT (owner) DO UPDATE
               SET heartbeat_at = now(), expires_at = EXCLUDED.expires_at, groups = EXCLUDED.groups
             RETURNING owner)
           UPDATE ${OWNERSHIP_TABLES.leases}
              SET expires_at = now() + $4::int * interval '1 millisecond', heartbeat_at = now(),
                  progress = COALESCE($7::jsonb -> name, progress),
                  progress_at = CASE WHEN $7::jsonb ? name THEN now() ELSE progress_at END
            WHERE owner = $1 AND name = ANY($6::text[]) AND expires_at > clock_timestamp()
           RETURNING name`,
    values: [owner, pid, host, ttlMs, groups, held, JSON.stringify(progress)],
  };
}
