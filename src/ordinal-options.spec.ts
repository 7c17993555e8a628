import { OrdinalError } from '@ordinal/pg';
import { resolveOrdinalOptions } from './ordinal-options.js';

describe('resolveOrdinalOptions: the connection', () => {
  it('refuses a url that does not parse, naming url and never its password', () => {
    // Given a password with characters a URL reserves, put raw into the url
    const url = 'postgres://app:Zx/9+q@w#Lk@127.0.0.1:5432/shop';
    // When the options are resolved
    let error: unknown;
    try {
      resolveOrdinalOptions({ url });
    } catch (e) {
      error = e;
    }
    // Then the start fails with invalid_configuration that says what to do
    expect(error).toBeInstanceOf(OrdinalError);
    expect((error as OrdinalError).code).toBe('invalid_configuration');
    expect((error as Error).message).toMatch(
      /^OrdinalModule: url is not a valid URL: .*percent-encode/,
    );
    expect((error as Error).message).not.toContain('9+q@w');
  });

  it('leaves a missing database, a refused password and a malformed url to no retry loop', () => {
    const { typeorm, createDatabase } = resolveOrdinalOptions({
      url: 'postgres://app@127.0.0.1:5432/shop',
    });
    const toRetry = typeorm!.toRetry!;
    expect(toRetry({ code: '3D000', message: 'database "shop" does not exist' })).toBe(false);
    expect(toRetry({ code: '28P01', message: 'password authentication failed' })).toBe(false);
    expect(toRetry(new TypeError('Invalid URL'))).toBe(false);
    // An outage is still retried
    expect(toRetry({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' })).toBe(true);
    // And development creates a missing database unless told otherwise
    expect(createDatabase).toBe(process.env.NODE_ENV !== 'production');
    expect(
      resolveOrdinalOptions({ url: 'postgres://a@h/db', createDatabase: false }).createDatabase,
    ).toBe(false);
  });
});
