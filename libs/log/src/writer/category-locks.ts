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

/**
 * A tenant's advisory lock key (docs/tenants.md#deleting-a-tenant): a concurrent-mode flush of
 * the tenant's messages holds it shared from before it reads the tenant's state to its commit,
 * and the tenant's deletion takes it exclusive, so no flush that read the tenant live commits
 * after the deletion.
 */
export function tenantLockKey(tenant: string): bigint {
  return createHash('sha256').update(`ordinal:tenant:${tenant}`).digest().readBigInt64BE(0);
}

/** The batch's tenants, sorted (empty for a batch of no tenant). */
export function batchTenants(batch: PendingAppend[]): string[] {
  const tenants = new Set<string>();
  for (const p of batch) if (p.request.tenant !== undefined) tenants.add(p.request.tenant);
  return [...tenants].sort();
}

/** The lock keys of the batch's tenants, sorted. */
export function tenantLockKeys(batch: PendingAppend[]): string[] {
  return batchTenants(batch)
    .map(tenantLockKey)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map(String);
}
