import { OrdinalError } from './ordinal.error.js';

/**
 * The database the connection names does not exist on the PostgreSQL server (SQLSTATE 3D000),
 * or could not be created. A configuration problem, not an outage: retrying does not help
 * until someone creates the database or points the connection at another one.
 */
export class DatabaseMissingError extends OrdinalError {
  constructor(
    readonly database: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('invalid_configuration', message, options);
  }
}
