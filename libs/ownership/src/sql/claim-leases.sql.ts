import type { SqlQuery } from '@ordinal/pg';
import { OWNERSHIP_TABLES } from '../ownership.constants.js';

/**
 * Claims up to `limit` of the named leases that are free (never owned, released, or expired
 * by the database's clock), in the order given; each claim increments the epoch. `SKIP
 * LOCKED` passes over a row whose holder is committing a batch right now (its fence holds the
 * row FOR SHARE until its commit); that row is claimed at a later tick, after the commit, so
 * the new owner reads a checkpoint that includes it.
 *
 * `acquired_at` is the moment of the claim (`clock_timestamp()`, after the row was locked and
 * found free), not the statement's start (`now()`), which a statement delayed under load puts
 * before the lease it takes had even lapsed. The expiry stays `now() + ttl`: the earlier the
 * start, the shorter the lease, the safe side.
 */
export function claimLeases(
  names: string[],
  owner: string,
  ttlMs: number,
  limit: number,
): SqlQuery {
  return {
    text: `UPDATE ${OWNERSHIP_TABLES.leases} l
              SET owner = $2, epoch = l.epoch + 1, acquired_at = clock_timestamp(), heartbeat_at = clock_timestamp(),
                  expires_at = now() + $3::int * interval '1 millisecond'
             FROM (SELECT name FROM ${OWNERSHIP_TABLES.leases}
                    WHERE name = ANY($1::text[]) AND (owner IS NULL OR expires_at IS NULL OR expires_at <= clock_timestamp())
                    ORDER BY array_position($1::text[], name)
                    LIMIT $4
                    FOR UPDATE SKIP LOCKED) free
            WHERE l.name = free.name
           RETURNING l.name, l.epoch::text AS epoch, l.progress,
                     (extract(epoch FROM clock_timestamp() - l.progress_at) * 1000)::float8 AS progress_age_ms`,
    values: [names, owner, ttlMs, limit],
  };
}
