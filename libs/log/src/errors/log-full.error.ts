import { MAX_POSITION, OrdinalError } from '@ordinal/pg';

/**
 * The append needs a position beyond 2^53 − 1 (`MAX_POSITION`), the last index every JSON
 * reader reads exactly: the log is full, and nothing of the append was stored. Permanent for
 * this log: retrying cannot succeed; write to a new log (a new database).
 */
export class LogFullError extends OrdinalError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(
      'log_full',
      `The log is full: ${detail}, and ${MAX_POSITION} (2^53 − 1) is the last index JSON readers read exactly; nothing was stored. Write to a new log (a new database); retrying here cannot succeed`,
      options,
    );
  }
}
