import type { AppendEntry, StoredMessage } from '@ordinal/log';

/** The stored message as the API shows it; indices and versions are JSON numbers. */
export function toMessageResponse(message: StoredMessage): Record<string, unknown> {
  const response: Record<string, unknown> = {
    id: message.id,
    messageType: message.messageType,
    userId: message.userId,
    body: message.body,
    metadata: message.metadata,
    contentHash: message.contentHash,
    createdAt: message.createdAt,
  };
  if (message.streamId !== null) {
    response.streamId = message.streamId;
    response.streamVersion = message.streamVersion;
  }
  if (message.schemaVersion !== 1) response.schemaVersion = message.schemaVersion;
  if (message.idempotencyKey !== null) response.idempotencyKey = message.idempotencyKey;
  return response;
}

/** One entry of an append's result: stored, repeated (idempotency key) or skipped (window). */
export function toEntryResponse(entry: AppendEntry): Record<string, unknown> {
  if (entry.status === 'duplicate') return { status: 'duplicate', contentHash: entry.contentHash };
  return { status: entry.status, ...toMessageResponse(entry.message) };
}

/** 201 if anything was stored, else 200 for key repeats, else 202 for window duplicates. */
export function statusOf(entries: AppendEntry[]): number {
  if (entries.some((e) => e.status === 'created')) return 201;
  if (entries.some((e) => e.status === 'repeat')) return 200;
  return 202;
}
