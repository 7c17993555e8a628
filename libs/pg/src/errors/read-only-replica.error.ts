import { OrdinalError } from './ordinal.error.js';

/**
 * A write reached a replica reader (`role: 'replica-reader'`, `ORDINAL_ROLE=replica-reader`),
 * or PostgreSQL refused it because the database is a read-only standby. Nothing was stored;
 * send writes to a primary instance. Not worth retrying here.
 */
export class ReadOnlyReplicaError extends OrdinalError {
  constructor(
    message = 'This instance is a replica reader (ORDINAL_ROLE=replica-reader) and does not write; send writes to a primary instance',
    options?: { cause?: unknown },
  ) {
    super('read_only_replica', message, options);
  }
}
