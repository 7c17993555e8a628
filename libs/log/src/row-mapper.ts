import type { StoredMessage } from './message.js';

/**
 * pg returns int8 as a string. Every position goes through here: numbers while exact
 * (below 2^53), an error otherwise, never ad hoc.
 */
export function toPosition(value: string | number | null | undefined): number {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`Position ${value} is not exact as a number`);
  return n;
}

/** A row of the messages table as the reader's SQL selects it. */
export interface MessageRow {
  index: string | number;
  message_type: string;
  user_id: string | null;
  body: unknown;
  metadata: Record<string, unknown> | null;
  content_hash: string;
  created_at: Date | string;
  stream_id: string | null;
  stream_version: string | number | null;
  schema_version: number;
  idempotency_key: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  trace_parent: string | null;
}

export function toStoredMessage(row: MessageRow): StoredMessage {
  return {
    id: toPosition(row.index),
    messageType: row.message_type,
    userId: row.user_id,
    body: row.body,
    metadata: row.metadata,
    contentHash: row.content_hash,
    createdAt: new Date(row.created_at).toISOString(),
    streamId: row.stream_id,
    streamVersion: row.stream_version === null ? null : toPosition(row.stream_version),
    schemaVersion: row.schema_version,
    idempotencyKey: row.idempotency_key,
    correlationId: row.correlation_id ?? null,
    causationId: row.causation_id ?? null,
    traceparent: row.trace_parent ?? null,
  };
}

/** The columns every read selects, in the order MessageRow names them. */
export const MESSAGE_COLUMNS =
  'index, message_type, user_id, body, metadata, content_hash, created_at, stream_id, stream_version, schema_version, idempotency_key, correlation_id, causation_id, trace_parent';
