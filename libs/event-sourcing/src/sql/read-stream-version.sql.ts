import { TABLES } from '@ordinal/log/internal';
import { type SqlQuery } from '@ordinal/pg';

/** A stream's current version from the heads table (0 when it has none): one index lookup. */
export function readStreamVersion(streamId: string): SqlQuery {
  return {
    text: `SELECT coalesce((SELECT version FROM ${TABLES.streams} WHERE stream_id = $1), 0)::text AS version`,
    values: [streamId],
  };
}
