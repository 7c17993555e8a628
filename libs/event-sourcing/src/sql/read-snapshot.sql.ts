import type { SqlQuery } from '@ordinal/pg';
import { ES_TABLES } from '../event-sourcing.constants.js';

/** The row `readSnapshot` returns. */
export interface SnapshotRow {
  version: string;
  state: unknown;
  schema_version: number;
  created_at: Date | string;
}

/** A stream's newest snapshot (at a version >= `fromVersion`). */
export function readSnapshot(streamId: string, fromVersion = 1): SqlQuery {
  return {
    text: `SELECT version::text AS version, state, schema_version, created_at FROM ${ES_TABLES.snapshots}
           WHERE stream_id = $1 AND version >= $2 ORDER BY version DESC LIMIT 1`,
    values: [streamId, fromVersion],
  };
}
