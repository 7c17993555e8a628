import { InvalidMessageError, isTenantId } from '@ordinal/log';
import { InvalidStreamIdError } from '../errors/index.js';

/**
 * Allowed stream ids: 1-200 characters of `[A-Za-z0-9._:@-]`, starting with a letter or a
 * digit (so the category, the text before the first `-`, is never empty).
 */
export const STREAM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/;

/** True when `streamId` is a valid stream id. */
export function isValidStreamId(streamId: unknown): streamId is string {
  return typeof streamId === 'string' && STREAM_ID_PATTERN.test(streamId);
}

/** Throws `InvalidStreamIdError` unless `streamId` is valid. */
export function assertStreamId(streamId: string): void {
  if (!isValidStreamId(streamId)) throw new InvalidStreamIdError(String(streamId));
}

/**
 * True for a stream id that can be read: a valid one, or a system stream's (`$` and a valid
 * id, such as the audit trail's `$audit-<day>`), which Ordinal writes and nobody appends to.
 */
export function isReadableStreamId(streamId: unknown): streamId is string {
  return (
    typeof streamId === 'string' &&
    (STREAM_ID_PATTERN.test(streamId) ||
      (streamId.startsWith('$') && STREAM_ID_PATTERN.test(streamId.slice(1))))
  );
}

/** Throws `InvalidStreamIdError` unless `streamId` can be read (`isReadableStreamId`). */
export function assertReadableStreamId(streamId: string): void {
  if (!isReadableStreamId(streamId)) throw new InvalidStreamIdError(String(streamId));
}

/** Throws unless `tenant` is a tenant id (docs/tenants.md), as the log's writer would. */
export function assertTenant(tenant: string): void {
  if (!isTenantId(tenant))
    throw new InvalidMessageError(
      `tenant must be 1-63 letters, digits, '_' or '.' (not starting with '_' or '.'), not ${JSON.stringify(tenant)}`,
    );
}

/** The tenant of a stored stream id (`acme` of `acme/order-1`), null for a stream of no tenant. */
export function tenantOfStoredId(storedId: string): string | null {
  const slash = storedId.indexOf('/');
  if (slash < 0) return null;
  const tenant = storedId.slice(0, slash);
  return isTenantId(tenant) ? tenant : null;
}
