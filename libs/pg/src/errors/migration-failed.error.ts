import { OrdinalError } from './ordinal.error.js';

/**
 * Migrations could not run at start: another process held the migration lock past the lock
 * timeout, or a migration failed (its transaction rolled back, nothing of the run applied).
 */
export class MigrationFailedError extends OrdinalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('migration_failed', message, options);
  }
}
