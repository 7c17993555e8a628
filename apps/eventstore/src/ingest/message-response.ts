import {
  toOrdinalMessage,
  toOrdinalRecord,
  type AppendEntry,
  type StoredMessage,
} from '@ordinal/log';
import type { TombstoneResponseDto } from '../events/dto/tombstone.response.js';
import type { MessageResponseDto } from './dto/message.response.js';
import type { BatchEntryDto } from './dto/publish.responses.js';

/**
 * The position as the API shows it: the contract's wire shape (`toOrdinalRecord`, the same JSON
 * PostgreSQL renders for reads): the message, or its tombstone when it is hidden or erased;
 * indices and versions are JSON numbers.
 */
export function toMessageResponse(
  message: StoredMessage,
): MessageResponseDto | TombstoneResponseDto {
  return toOrdinalRecord(message);
}

/** A message just stored (never a tombstone): the contract's message. */
export function toStoredResponse(message: StoredMessage): MessageResponseDto {
  return toOrdinalMessage(message);
}

/** One entry of an append's result: stored, repeated (idempotency key) or skipped (window). */
export function toEntryResponse(entry: AppendEntry): BatchEntryDto {
  if (entry.status === 'duplicate') return { status: 'duplicate', contentHash: entry.contentHash };
  return { status: entry.status, ...toStoredResponse(entry.message) };
}

/** 201 if anything was stored, else 200 for key repeats, else 202 for window duplicates. */
export function statusOf(entries: AppendEntry[]): number {
  if (entries.some((e) => e.status === 'created')) return 201;
  if (entries.some((e) => e.status === 'repeat')) return 200;
  return 202;
}
