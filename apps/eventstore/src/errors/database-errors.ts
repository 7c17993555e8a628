import { isConnectionError, isDataError, isReadOnlyError } from '@ordinal/pg';

/**
 * SQLSTATEs that mean "the database will not serve us right now" beyond the libraries'
 * connection codes: the database refuses connections (`ALTER DATABASE … ALLOW_CONNECTIONS
 * false`, 55000), is starting or shutting down (57P03), is gone (3D000), or refuses the role
 * (28000, 28P01).
 */
const REFUSAL_CODES = new Set(['55000', '57P03', '3D000', '28000', '28P01', '53300']);

/** The SQLSTATE of a pg error, also under TypeORM's QueryFailedError. */
function sqlState(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A raw driver error that reached the HTTP layer because the database is unavailable: a 503
 * with Retry-After, as the libraries' own DatabaseUnavailableError is. The last line of
 * defence, so that no read route answers 500 during an outage.
 */
export function isDatabaseOutage(error: unknown): boolean {
  const code = sqlState(error);
  if (code && REFUSAL_CODES.has(code)) return true;
  if (isConnectionError(error)) return true;
  // A hot standby cancelled the read to replay the primary's WAL (a replica reader): retry it.
  // (Only a phrase is looked for in the message: a non-text one simply does not match.)
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  if (String((error as { message?: unknown })?.message ?? '').includes('conflict with recovery'))
    return true;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as above
  return String((error as { message?: unknown })?.message ?? '').includes('Query read timeout');
}

/** A raw driver error that says the data itself was refused (SQLSTATE class 22): the request's fault, a 400. */
export function isRefusedData(error: unknown): boolean {
  return isDataError(error);
}

/** A raw driver error that says the database is a read-only standby (a write on a replica reader): 421. */
export function isReadOnlyDatabase(error: unknown): boolean {
  return isReadOnlyError(error);
}
