import { DatabaseUnavailableError, StorageFullError } from './errors/index.js';
import {
  insufficientResources,
  isAuthenticationFailure,
  isConnectionError,
  isMissingDatabase,
  isStorageFull,
} from './pg-errors.js';

/** A pg error as the driver raises it, or wrapped as TypeORM's QueryFailedError wraps it. */
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });
const wrapped = (code: string, message: string) =>
  Object.assign(new Error(message), { driverError: pgError(code, message) });

describe('insufficient resources (SQLSTATE class 53)', () => {
  it('makes a full disk (53100, also under TypeORM) a StorageFullError that names the file', () => {
    const message = 'could not extend file "base/5/16384": No space left on device';
    for (const error of [pgError('53100', message), wrapped('53100', message)]) {
      expect(isStorageFull(error)).toBe(true);
      const failure = insufficientResources(error, 'The append');
      expect(failure).toBeInstanceOf(StorageFullError);
      expect(failure).toMatchObject({ code: 'storage_full' });
      expect(failure!.message).toContain(message);
    }
  });

  it('makes out of memory and configuration limits a DatabaseUnavailableError, and leaves other errors alone', () => {
    for (const code of ['53000', '53200', '53400'])
      expect(
        insufficientResources(pgError(code, 'out of shared memory'), 'The append'),
      ).toBeInstanceOf(DatabaseUnavailableError);
    // too_many_connections is a refused connection, classified as such elsewhere
    expect(insufficientResources(pgError('53300', 'too many clients'), 'The append')).toBeNull();
    expect(insufficientResources(pgError('23505', 'duplicate key'), 'The append')).toBeNull();
    expect(isStorageFull(pgError('22P02', 'invalid input'))).toBe(false);
  });
});

describe('a refused connection that retrying does not cure', () => {
  it('tells a missing database (3D000) and a refused role (28P01, 28000) from an outage, under TypeORM too', () => {
    const missing = { code: '3D000', message: 'database "shop" does not exist' };
    expect(isMissingDatabase(missing)).toBe(true);
    expect(isMissingDatabase({ driverError: missing, message: 'wrapped' })).toBe(true);
    expect(isConnectionError(missing)).toBe(false);
    expect(
      isAuthenticationFailure({ code: '28P01', message: 'password authentication failed' }),
    ).toBe(true);
    expect(isAuthenticationFailure({ code: '28000', message: 'no pg_hba.conf entry' })).toBe(true);
    expect(isMissingDatabase({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' })).toBe(
      false,
    );
  });
});
