import type { SqlQuery } from '@ordinal/pg';
import { SUBSCRIPTION_TABLES } from '../subscriptions.constants.js';

const T = SUBSCRIPTION_TABLES.checkpoints;
/**
 * `late_owed_since` holds the earliest time the subscription still owed a late arrival from
 * when it last wrote its position (LateTracker.owedSince). It is read back as `arrived_since`,
 * what the restart's watch takes (`readOpenSkipped`). "Owes none" cannot be a null: null is
 * what every row written before the column existed holds, and those must fall back to
 * `updated_at` (the time of the save, as they resumed before). So owing none is stored as
 * `infinity` (no claim is stamped at or after it: exactly "none"), and read back as null.
 */
const ARRIVED_SINCE = `CASE WHEN late_owed_since IS NULL THEN updated_at
                            WHEN late_owed_since = 'infinity' THEN NULL ELSE late_owed_since END`;
const COLUMNS = `name, kind, position::text AS position, live_from::text AS live_from, state, last_error, updated_at,
                 ${ARRIVED_SINCE} AS arrived_since`;
/** What a save writes into `late_owed_since` from its parameter (a time, or null: owes none). */
const owed = (parameter: string) => `COALESCE(${parameter}::timestamptz, 'infinity')`;

/** A checkpoint row as the builders below select it. */
export interface CheckpointRow {
  name: string;
  kind: string;
  position: string;
  live_from: string;
  state: string;
  last_error: string | null;
  updated_at: Date;
  /** What the restart's late watch takes as `arrivedSince` (null: none that arrived). */
  arrived_since: Date | null;
}

/**
 * Creates the checkpoint when it does not exist yet, and returns it either way. A new one owes
 * the arrivals claimed from its creation on (below a start at the end of the log).
 */
export function ensureCheckpoint(
  name: string,
  kind: string,
  position: number,
  liveFrom: number,
): SqlQuery {
  return {
    text: `WITH created AS (
             INSERT INTO ${T} (name, kind, position, live_from, late_owed_since) VALUES ($1, $2, $3, $4, now())
             ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS})
           SELECT * FROM created
           UNION ALL SELECT ${COLUMNS} FROM ${T} WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM created)`,
    values: [name, kind, position, liveFrom],
  };
}

/**
 * Moves a checkpoint from `expected` to `position` (inside the batch's transaction); the last
 * error stays visible as history, the state says it recovered. `owedSince`: the earliest time
 * it still owes a late arrival at or below `position` from (null: none). Returns
 * no row when someone else moved it meanwhile (a rebuild, a second instance): the batch must
 * roll back.
 */
export function advanceCheckpoint(
  name: string,
  expected: number,
  position: number,
  owedSince: Date | null,
): SqlQuery {
  return {
    text: `UPDATE ${T} SET position = $3, state = 'running', updated_at = now(), progressed_at = now(),
             late_owed_since = ${owed('$4')}
           WHERE name = $1 AND position = $2 RETURNING name`,
    values: [name, expected, position, owedSince],
  };
}

/**
 * Touches a checkpoint without moving it (a late arrival's transaction), with what it owes
 * once that arrival is delivered; no row if it moved.
 */
export function touchCheckpoint(name: string, expected: number, owedSince: Date | null): SqlQuery {
  return {
    text: `UPDATE ${T} SET state = 'running', updated_at = now(), late_owed_since = ${owed('$3')}
           WHERE name = $1 AND position >= $2 RETURNING name`,
    values: [name, expected, owedSince],
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

/**
 * Starts a checkpoint over (rebuild): position, new replay boundary, no error; it owes the
 * arrivals claimed from now on (below a start at the end of the log), as a new one does.
 */
export function resetCheckpoint(name: string, position: number, liveFrom: number): SqlQuery {
  return {
    text: `UPDATE ${T} SET position = $2, live_from = $3, state = 'running', last_error = NULL, updated_at = now(), progressed_at = now(),
             late_owed_since = now()
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
