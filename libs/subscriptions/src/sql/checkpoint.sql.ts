import type { SqlQuery } from '@ordinal/pg';
import { SUBSCRIPTION_TABLES } from '../subscriptions.constants.js';

const T = SUBSCRIPTION_TABLES.checkpoints;
const COLUMNS = `name, kind, position::text AS position, live_from::text AS live_from, state, last_error, updated_at`;

/** A checkpoint row as the builders below select it. */
export interface CheckpointRow {
  name: string;
  kind: string;
  position: string;
  live_from: string;
  state: string;
  last_error: string | null;
  updated_at: Date;
}

/** Creates the checkpoint when it does not exist yet, and returns it either way. */
export function ensureCheckpoint(
  name: string,
  kind: string,
  position: number,
  liveFrom: number,
): SqlQuery {
  return {
    text: `WITH created AS (
             INSERT INTO ${T} (name, kind, position, live_from) VALUES ($1, $2, $3, $4)
             ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS})
           SELECT * FROM created
           UNION ALL SELECT ${COLUMNS} FROM ${T} WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM created)`,
    values: [name, kind, position, liveFrom],
  };
}

/**
 * Moves a checkpoint from `expected` to `position` (inside the batch's transaction); the last
 * error stays visible as history, the state says it recovered. Returns
 * no row when someone else moved it meanwhile (a rebuild, a second instance): the batch must
 * roll back.
 */
export function advanceCheckpoint(name: string, expected: number, position: number): SqlQuery {
  return {
    text: `UPDATE ${T} SET position = $3, state = 'running', updated_at = now(), progressed_at = now()
           WHERE name = $1 AND position = $2 RETURNING name`,
    values: [name, expected, position],
  };
}

/** Touches a checkpoint without moving it (a late arrival's transaction); no row if it moved. */
export function touchCheckpoint(name: string, expected: number): SqlQuery {
  return {
    text: `UPDATE ${T} SET state = 'running', updated_at = now()
           WHERE name = $1 AND position >= $2 RETURNING name`,
    values: [name, expected],
  };
}

/** Records a failed batch, outside its (rolled back) transaction; `stopped` when its error policy stopped it. */
export function markFailed(
  name: string,
  error: string,
  state: 'failed' | 'stopped' = 'failed',
): SqlQuery {
  return {
    text: `UPDATE ${T} SET state = $3, last_error = $2, updated_at = now() WHERE name = $1`,
    values: [name, error, state],
  };
}

/** Starts a checkpoint over (rebuild): position, new replay boundary, no error. */
export function resetCheckpoint(name: string, position: number, liveFrom: number): SqlQuery {
  return {
    text: `UPDATE ${T} SET position = $2, live_from = $3, state = 'running', last_error = NULL, updated_at = now(), progressed_at = now()
           WHERE name = $1 RETURNING name`,
    values: [name, position, liveFrom],
  };
}

/** Locks checkpoint rows until the end of the transaction (a rebuild, before it clears the read model). */
export function lockCheckpoints(names: string[]): SqlQuery {
  return {
    text: `SELECT name FROM ${T} WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE`,
    values: [names],
  };
}
