import { LOG_CHANNEL, TABLES } from '../log.constants.js';
import type { SqlQuery } from './sql-query.js';

/** Column-wise arrays of the rows one flush inserts (one multi-row statement, L2). */
export interface InsertColumns {
  index: number[];
  messageType: string[];
  userId: (string | null)[];
  streamId: (string | null)[];
  streamVersion: (number | null)[];
  category: (string | null)[];
  body: string[];
  metadata: (string | null)[];
  schemaVersion: number[];
  contentHash: string[];
  idempotencyKey: (string | null)[];
}

/** The stream heads a flush moves. */
export interface StreamHeads {
  streamId: string[];
  version: number[];
}

/**
 * Inserts a batch with `unnest`, moves the stream heads, and queues a NOTIFY carrying the
 * new head (delivered by PostgreSQL only if the transaction commits).
 */
export function insertMessages(rows: InsertColumns, streams: StreamHeads, head: number): SqlQuery {
  return {
    text: `WITH inserted AS (
        INSERT INTO ${TABLES.messages} (index, message_type, user_id, stream_id, stream_version,
          category, body, metadata, schema_version, content_hash, idempotency_key)
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[],
          $6::text[], $7::jsonb[], $8::jsonb[], $9::int[], $10::text[], $11::text[])
        RETURNING 1
      ), heads AS (
        INSERT INTO ${TABLES.streams} (stream_id, version)
        SELECT * FROM unnest($12::text[], $13::bigint[])
        ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version, updated_at = now()
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM inserted)::int AS inserted,
             pg_notify('${LOG_CHANNEL}', $14::text) AS notified`,
    values: [
      rows.index,
      rows.messageType,
      rows.userId,
      rows.streamId,
      rows.streamVersion,
      rows.category,
      rows.body,
      rows.metadata,
      rows.schemaVersion,
      rows.contentHash,
      rows.idempotencyKey,
      streams.streamId,
      streams.version,
      String(head),
    ],
  };
}
