import { toOrdinalMessage, type AppendEntry, type StoredMessage } from '@ordinal/log';
import type { MessageResponseDto } from './dto/message.response.js';
import type { BatchEntryDto } from './dto/publish.responses.js';

/**
 * The stored message as the API shows it: the contract's wire shape (`toOrdinalMessage`, the
 * same JSON PostgreSQL renders for reads); indices and versions are JSON numbers.
 */
export function toMessageResponse(message: StoredMessage): MessageResponseDto {
  return toOrdinalMessage(message);
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
