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

describe('resolveLogOptions: every bounded option is checked where its default is applied', () => {
  it.each([
    ['mailboxLimit', 0, 'log.mailboxLimit must be a whole number of at least 1, got 0'],
    ['livePollMs', 5, 'log.livePollMs must be a number of milliseconds of at least 10, got 5'],
    ['lateRescanMs', 1.5, 'log.lateRescanMs must be a number of milliseconds of at least 10'],
    ['lateWatchMs', -1, 'log.lateWatchMs must be a number of milliseconds of at least 0, got -1'],
    ['duplicateWindow', -1, 'log.duplicateWindow must be a whole number of at least 0, got -1'],
  ] as const)('refuses %s %p', (option, value, message) => {
    // Given an option the log cannot run with, When the options are resolved
    // Then a typed error names the option, its bound and the server's variable
    expect(() => resolveLogOptions({ [option]: value })).toThrow(
      // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- Jest types asymmetric matchers as any
      expect.objectContaining({
        code: 'invalid_configuration',
        message: expect.stringContaining(message) as string,
      }),
    );
  });

  it('polls faster on a replica reader, where no NOTIFY arrives; an explicit poll wins', () => {
    expect(resolveLogOptions({ role: 'replica-reader' }).livePollMs).toBe(200);
    expect(resolveLogOptions({}).livePollMs).toBe(1000);
    expect(resolveLogOptions({ role: 'replica-reader', livePollMs: 50 }).livePollMs).toBe(50);
  });
});
