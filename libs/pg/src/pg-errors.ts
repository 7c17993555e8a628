import { DatabaseUnavailableError, StorageFullError, type OrdinalError } from './errors/index.js';

/** SQLSTATE classes and socket codes that mean "the database is not there right now". */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown (pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08P01',
]);

const CONNECTION_MESSAGES = [
  'Connection terminated',
  'connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Client was closed',
  'Connection is not established',
  'terminating connection',
  'Query runner already released',
];

/** The driver error under TypeORM's QueryFailedError (or the error itself). */
export function driverError(error: unknown): { code?: string; message: string } {
  const e = error as { driverError?: unknown; code?: string; message?: string };
  const inner = (e?.driverError ?? e) as { code?: string; message?: string };
  return { code: inner?.code, message: String(inner?.message ?? error) };
}

/** Whether an error is a lost or refused connection rather than a problem with the data. */
export function isConnectionError(error: unknown): boolean {
  const { code, message } = driverError(error);
  if (code && CONNECTION_CODES.has(code)) return true;
  return CONNECTION_MESSAGES.some((m) => message.includes(m));
}

/**
 * Whether the driver gave up waiting for an answer (pg's `query_timeout`). The statement may
 * still be running, or have committed, on the server: the connection must not be reused.
 */
export function isQueryTimeout(error: unknown): boolean {
  return driverError(error).message.includes('Query read timeout');
}

/**
 * Whether PostgreSQL refused the connection because the database it names does not exist
 * (SQLSTATE 3D000, invalid_catalog_name): a configuration problem, not an outage, so a start
 * says so once instead of retrying.
 */
export function isMissingDatabase(error: unknown): boolean {
  return driverError(error).code === '3D000';
}

/** Whether PostgreSQL refused the role or its password (SQLSTATE 28P01, 28000): retrying does not help. */
export function isAuthenticationFailure(error: unknown): boolean {
  const { code } = driverError(error);
  return code === '28P01' || code === '28000';
}

/** Whether PostgreSQL rejected the data itself (SQLSTATE class 22: data exception). */
export function isDataError(error: unknown): boolean {
  const { code } = driverError(error);
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * Whether a sequence refused `nextval` at its MAXVALUE (SQLSTATE 2200H,
 * sequence_generator_limit_exceeded): for the log's sequence, the log is full. A class-22 code,
 * so also a data error: test this one first.
 */
export function isSequenceExhausted(error: unknown): boolean {
  return driverError(error).code === '2200H';
}

/**
 * Whether PostgreSQL refused a write because the database is a read-only standby (SQLSTATE
 * 25006 read_only_sql_transaction, or a function such as `nextval` refused during recovery).
 */
export function isReadOnlyError(error: unknown): boolean {
  const { code, message } = driverError(error);
  return code === '25006' || message.includes('during recovery');
}

/**
 * Whether PostgreSQL could not store something for want of disk space: SQLSTATE 53100
 * disk_full (PostgreSQL reports ENOSPC on any of its files with it), or a bare ENOSPC.
 */
export function isStorageFull(error: unknown): boolean {
  const { code, message } = driverError(error);
  return code === '53100' || code === 'ENOSPC' || message.includes('No space left on device');
}

/**
 * The library error for a database that lacks a resource (SQLSTATE class 53, insufficient
 * resources), or null for any other error. Out of disk (53100) is `StorageFullError`; out of
 * memory or shared memory (53000, 53200, 53400) is `DatabaseUnavailableError`: both are 503s
 * worth retrying later, nothing was stored. 53300 too_many_connections is a connection error.
 * `what` says what failed ("The append", "The import").
 */
export function insufficientResources(error: unknown, what: string): OrdinalError | null {
  const { code, message } = driverError(error);
  if (isStorageFull(error))
    return new StorageFullError(
      `${what} failed: the database's disk is full (${message}); nothing was stored. Free space on the database's disk and retry`,
      { cause: error },
    );
  if (typeof code === 'string' && code.startsWith('53') && code !== '53300')
    return new DatabaseUnavailableError(
      `${what} failed: the database lacks resources (${code}: ${message}); nothing was stored, retry later`,
      false,
      { cause: error },
    );
  return null;
}
