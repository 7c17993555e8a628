import type { NewMessage, StoredMessage } from '@ordinal/log';
import { toStorableJson } from '@ordinal/pg';

/** A JSON value's canonical text (RFC 8785), so key order and spacing do not count. */
function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  const built = toStorableJson(value, '');
  return 'canonical' in built ? built.canonical : JSON.stringify(value);
}

/**
 * Whether a message sent with an idempotency key asks for what the key already stored: the
 * same type, user, content and metadata. A repeat of the same request is answered with the
 * original (200); the key reused for another request is refused (422), as the IETF
 * Idempotency-Key draft says, rather than silently answered with a different message.
 */
export function isSameRequest(stored: StoredMessage, sent: NewMessage): boolean {
  return (
    stored.messageType === sent.messageType &&
    stored.userId === (sent.userId ?? null) &&
    canonical(stored.body) === canonical(sent.body) &&
    canonical(stored.metadata) === canonical(sent.metadata)
  );
}
