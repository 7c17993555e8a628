import { toStorableJson } from '@ordinal/pg';

/** What decides whether two messages under one idempotency key are the same request. */
export interface KeyedMessage {
  /** Its index when stored; null for a line earlier in the same import. */
  id: number | null;
  messageType: string;
  userId: string | null;
  contentHash: string;
  metadata: Record<string, unknown> | null;
}

function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  const built = toStorableJson(value, '');
  return 'canonical' in built ? built.canonical : JSON.stringify(value);
}

/** Same type, user, content (by its RFC 8785 hash) and metadata: what `POST /api/events/messages` calls a repeat. */
export function sameMessage(a: KeyedMessage, b: KeyedMessage): boolean {
  return (
    a.messageType === b.messageType &&
    a.userId === b.userId &&
    a.contentHash === b.contentHash &&
    canonical(a.metadata) === canonical(b.metadata)
  );
}
