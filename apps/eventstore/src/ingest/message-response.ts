import type { AppendEntry, StoredMessage } from '@ordinal/log';
import type { MessageResponseDto } from './dto/message.response.js';
import type { BatchEntryDto } from './dto/publish.responses.js';

/** The stored message as the API shows it; indices and versions are JSON numbers. */
export function toMessageResponse(message: StoredMessage): MessageResponseDto {
  const response: MessageResponseDto = {
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
    response.streamVersion = message.streamVersion!;
  }
  if (message.schemaVersion !== 1) response.schemaVersion = message.schemaVersion;
  if (message.idempotencyKey !== null) response.idempotencyKey = message.idempotencyKey;
  if (message.correlationId !== null) response.correlationId = message.correlationId;
  if (message.causationId !== null) response.causationId = message.causationId;
  if (message.traceparent !== null) response.traceparent = message.traceparent;
  return response;
}

/** One entry of an append's result: stored, repeated (idempotency key) or skipped (window). */
export function toEntryResponse(entry: AppendEntry): BatchEntryDto {
  if (entry.status === 'duplicate') return { status: 'duplicate', contentHash: entry.contentHash };
  return { status: entry.status, ...toMessageResponse(entry.message) };
}

/** 201 if anything was stored, else 200 for key repeats, else 202 for window duplicates. */
export function statusOf(entries: AppendEntry[]): number {
  if (entries.some((e) => e.status === 'created')) return 201;
  if (entries.some((e) => e.status === 'repeat')) return 200;
  return 202;
}
