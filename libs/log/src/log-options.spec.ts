import { OrdinalError } from '@ordinal/pg';
import { resolveLogOptions } from './log-options.js';

describe('resolveLogOptions', () => {
  it('defaults takeoverMs to 5000', () => {
    expect(resolveLogOptions({}).takeoverMs).toBe(5000);
  });

  it.each([300, 0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses takeoverMs %p with a typed error naming the option and its bound',
    (takeoverMs) => {
      // Given a takeover bound below what ownership can keep (or not a number: an unset environment variable through Number())
      // When the options are resolved, at start
      let error: unknown;
      try {
        resolveLogOptions({ takeoverMs });
      } catch (thrown) {
        error = thrown;
      }
      // Then the error is Ordinal's, with a stable code, and says which option and what it accepts
      expect(error).toBeInstanceOf(OrdinalError);
      expect(error).toMatchObject({
        code: 'invalid_configuration',
        message: expect.stringContaining(
          `log.takeoverMs must be a number of milliseconds of at least 500, got ${takeoverMs}`,
        ) as unknown,
      });
    },
  );

  it('accepts the smallest bound', () => {
    expect(resolveLogOptions({ takeoverMs: 500 }).takeoverMs).toBe(500);
  });
});
