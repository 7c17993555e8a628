import type { SqlQuery } from '@ordinal/pg';
import { ES_TABLES } from '../event-sourcing.constants.js';

/** The row `readSnapshot` returns. */
export interface SnapshotRow {
  version: string;
  state: unknown;
  schema_version: number;
  created_at: Date | string;
}

/** A stream's newest snapshot. */
export function readSnapshot(streamId: string): SqlQuery {
  return {
    text: `SELECT version::text AS version, state, schema_version, created_at FROM ${ES_TABLES.snapshots}
           WHERE stream_id = $1 ORDER BY version DESC LIMIT 1`,
    values: [streamId],
  };
}
