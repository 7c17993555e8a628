import type { SqlQuery } from '@ordinal/pg';
import { SUBSCRIPTION_TABLES } from '@ordinal/subscriptions/internal';

const T = SUBSCRIPTION_TABLES.projectionVersions;
const COLUMNS = `projection, version, build, schema_name, consumers, tables, state,
  stop_at::text AS stop_at, live_from::text AS live_from, promote_at_lag, created_at, promoted_at, retired_at`;

/** A build row as the builders below select it. */
export interface BuildRow {
  projection: string;
  version: number;
  build: number;
  schema_name: string;
  consumers: string;
  tables: string[];
  state: 'candidate' | 'serving' | 'previous' | 'retired';
  stop_at: string | null;
  live_from: string | null;
  promote_at_lag: number | null;
  created_at: Date;
  promoted_at: Date | null;
  retired_at: Date | null;
}

/** Every build of a projection, oldest first; `lock` takes them FOR UPDATE (promotion, rollback, retire). */
export function readBuilds(projection: string, lock = false): SqlQuery {
  return {
    text: `SELECT ${COLUMNS} FROM ${T} WHERE projection = $1 ORDER BY version, build${lock ? ' FOR UPDATE' : ''}`,
    values: [projection],
  };
}

/** Every build of every projection (reports). */
export function readAllBuilds(): SqlQuery {
  return { text: `SELECT ${COLUMNS} FROM ${T} ORDER BY projection, version, build`, values: [] };
}

/**
 * The rows a batch of one build depends on, FOR SHARE: its own and the serving build's. A
 * promotion takes them FOR UPDATE, so it waits for batches in flight and the next batch reads
 * the new states.
 */
export function readGateRows(projection: string, version: number, build: number): SqlQuery {
  return {
    text: `SELECT ${COLUMNS} FROM ${T}
            WHERE projection = $1 AND (state = 'serving' OR (version = $2 AND build = $3))
            FOR SHARE`,
    values: [projection, version, build],
  };
}

/** Records a new build (nothing when it exists); returns it when inserted. */
export function insertBuild(row: {
  projection: string;
  version: number;
  build: number;
  schema: string;
  consumers: string;
  tables: string[];
  state: 'candidate' | 'serving';
  promoteAtLag: number | null;
}): SqlQuery {
  return {
    text: `INSERT INTO ${T} (projection, version, build, schema_name, consumers, tables, state, promote_at_lag, promoted_at)
           VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, CASE WHEN $7 = 'serving' THEN now() END)
           ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    values: [
      row.projection,
      row.version,
      row.build,
      row.schema,
      row.consumers,
      row.tables,
      row.state,
      row.promoteAtLag,
    ],
  };
}

/** Sets a build's state and hand-over points (inside a promotion, rollback or retire). */
export function updateBuild(
  projection: string,
  version: number,
  build: number,
  change: {
    state: BuildRow['state'];
    stopAt: number | null;
    liveFrom: number | null;
    schema?: string;
  },
): SqlQuery {
  return {
    text: `UPDATE ${T} SET state = $4, stop_at = $5, live_from = $6, schema_name = coalesce($7, schema_name),
                  promoted_at = CASE WHEN $4 = 'serving' THEN now() ELSE promoted_at END,
                  retired_at = CASE WHEN $4 = 'retired' THEN now() ELSE retired_at END
            WHERE projection = $1 AND version = $2 AND build = $3`,
    values: [
      projection,
      version,
      build,
      change.state,
      change.stopAt,
      change.liveFrom,
      change.schema ?? null,
    ],
  };
}

/**
 * The serving build stops at `stopAt` (its candidate takes the side effects above it, because
 * no live process runs the serving build). Only while nobody set it.
 */
export function handOverBuild(
  projection: string,
  version: number,
  build: number,
  stopAt: number,
): SqlQuery {
  return {
    text: `UPDATE ${T} SET stop_at = $4 WHERE projection = $1 AND version = $2 AND build = $3 AND stop_at IS NULL
           RETURNING stop_at::text AS stop_at`,
    values: [projection, version, build, stopAt],
  };
}

/** Records the read-model tables of a build (when its process knows them). */
export function setBuildTables(
  projection: string,
  version: number,
  build: number,
  tables: string[],
): SqlQuery {
  return {
    text: `UPDATE ${T} SET tables = $4::text[] WHERE projection = $1 AND version = $2 AND build = $3 AND tables IS DISTINCT FROM $4::text[]`,
    values: [projection, version, build, tables],
  };
}

/**
 * An in-place rebuild of a build: its replay boundary is the checkpoint's again (the head at
 * the rebuild), not the hand-over of its promotion, so the replay holds its side effects.
 */
export function clearBuildLiveFrom(projection: string, version: number, build: number): SqlQuery {
  return {
    text: `UPDATE ${T} SET live_from = NULL WHERE projection = $1 AND version = $2 AND build = $3`,
    values: [projection, version, build],
  };
}
