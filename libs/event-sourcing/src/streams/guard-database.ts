import { DatabaseUnavailableError } from '@ordinal/pg';
import { insufficientResources, isConnectionError } from '@ordinal/pg';

/**
 * Runs an operation; a lost or refused connection becomes `DatabaseUnavailableError`, a database
 * out of disk or memory `StorageFullError` or `DatabaseUnavailableError` (never a raw pg error).
 */
export async function guardDatabase<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (isConnectionError(error)) {
      throw new DatabaseUnavailableError(
        `The database is unavailable (${(error as Error).message}); retry later`,
        false,
        { cause: error },
      );
    }
    throw insufficientResources(error, 'The operation') ?? error;
  }
}
