import { DatabaseUnavailableError } from '@ordinal/pg';
import { isConnectionError } from '@ordinal/pg';

/** Runs a read; a lost or refused connection becomes `DatabaseUnavailableError` (never a raw pg error). */
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
    throw error;
  }
}
