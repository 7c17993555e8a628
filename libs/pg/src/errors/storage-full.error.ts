import { OrdinalError } from './ordinal.error.js';

/**
 * PostgreSQL is out of disk space (SQLSTATE 53100 disk_full: a data file, a tablespace or the
 * write-ahead log could not grow). Nothing of the failed operation was stored; reads still
 * work. Retry after space is freed on the database's disk: the message names the file.
 */
export class StorageFullError extends OrdinalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('storage_full', message, options);
  }
}
