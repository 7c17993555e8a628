import { createHash } from 'node:crypto';
import { categoryOf } from '../message.js';
import type { PendingAppend } from './pending-append.js';

/** The category of messages outside any stream: they commit in order among themselves. */
export const NO_CATEGORY = '$none';

/** A stable signed 64-bit advisory lock key for a category (first 8 bytes of its SHA-256). */
export function categoryLockKey(category: string): bigint {
  return createHash('sha256').update(`ordinal:category:${category}`).digest().readBigInt64BE(0);
}

/** The lock keys a concurrent flush takes, sorted so two flushes can never deadlock. */
export function categoryLockKeys(batch: PendingAppend[]): string[] {
  const categories = new Set(
    batch.map((p) => (p.request.stream ? categoryOf(p.request.stream.streamId) : NO_CATEGORY)),
  );
  return [...categories]
    .map(categoryLockKey)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map(String);
}
