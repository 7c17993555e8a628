import { TABLES } from '../log.constants.js';
import type { SqlQuery } from '@ordinal/pg';

/** A row of `latestHashes`: the stored columns a message's resend key is derived from. */
export interface LatestHashRow {
  message_type: string;
  user_id: string | null;
  content_hash: string;
  /** The metadata's JSON text (jsonb order), or null. */
  metadata: string | null;
}

/**
 * The duplicate window's memory (L7): of the latest `count` messages, those the window
 * compares (no stream, no idempotency key), with what identifies a resend. The limit is taken
 * on the index first, so a log of stream appends is not scanned for older plain messages.
 */
export function latestHashes(count: number): SqlQuery {
  return {
    text: `SELECT message_type, user_id, content_hash, metadata::text AS metadata
           FROM (SELECT message_type, user_id, content_hash, metadata, stream_id, idempotency_key
                 FROM ${TABLES.messages} ORDER BY index DESC LIMIT $1) latest
           WHERE stream_id IS NULL AND idempotency_key IS NULL AND content_hash IS NOT NULL`,
    values: [count],
  };
}
