import { OrdinalError } from './ordinal.error.js';

/**
 * PostgreSQL could not be reached or dropped the connection. Nothing was acknowledged;
 * retrying later is safe (use an idempotency key when the outcome of a commit is unknown).
 */
export class DatabaseUnavailableError extends OrdinalError {
  constructor(
    message = 'The database is unavailable; retry later',
    readonly outcomeUnknown = false,
    options?: { cause?: unknown },
  ) {
    super('database_unavailable', message, options);
  }
}
