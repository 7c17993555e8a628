import { hash } from 'node:crypto';
import { toCanonicalJson } from '@ordinal/pg';

/**
 * SHA-256 (hex) of the body's canonical JSON (RFC 8785): the stored `content_hash`, which a
 * reader recomputes from the body it gets. The one-shot `crypto.hash` costs a fraction of a
 * `createHash` object on the request path.
 */
export function contentHash(bodyJson: string): string {
  return hash('sha256', bodyJson, 'hex');
}

/**
 * What the duplicate window compares: SHA-256 (hex) of the message type, the user id, the
 * body's content hash and the metadata's canonical JSON (RFC 8785). A resend repeats all four;
 * two genuine events rarely do (a `BookLost` after a `BookReturned` of the same book, the same
 * `Ping` from two users). Correlation ids are left out: a resend gets new ones. Derived from
 * stored columns, so the window's memory is rebuilt from the log at start (no column of its own).
 */
export function resendKey(
  messageType: string,
  userId: string | null | undefined,
  bodyHash: string,
  metadataJson: string | null,
): string {
  return hash(
    'sha256',
    JSON.stringify([messageType, userId ?? null, bodyHash, metadataJson]),
    'hex',
  );
}

/**
 * The resend key of a stored message, from its columns (`metadata` as PostgreSQL gives its
 * text): the same key `resendKey` gave the message when it was sent, since the log stores
 * what it was sent exactly and canonical JSON does not depend on key order.
 */
export function storedResendKey(row: {
  message_type: string;
  user_id: string | null;
  content_hash: string;
  metadata: string | null;
}): string {
  const canonical =
    row.metadata === null ? null : toCanonicalJson(JSON.parse(row.metadata), 'metadata');
  // Metadata the rules refuse cannot have been sent through them: its text stands for itself.
  const metadataJson =
    typeof canonical === 'string' || canonical === null ? canonical : row.metadata;
  return resendKey(row.message_type, row.user_id, row.content_hash, metadataJson);
}
