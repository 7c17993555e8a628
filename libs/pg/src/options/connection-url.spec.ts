import {
  connectionUrlProblem,
  maskCredentials,
  urlFromPgEnvironment,
  withPassword,
} from './connection-url.js';

const PASSWORD = 'p/a@s#s';
const PG = ['postgres:', 'postgresql:'] as const;

describe('maskCredentials', () => {
  it('masks the password of every URL in a text, reserved characters included', () => {
    const text = `TypeError: Invalid URL; input: 'postgres://postgres:${PASSWORD}@db:5432/ordinal' and amqp://guest:guest@mq:5672`;
    const masked = maskCredentials(text);
    expect(masked).toBe(
      "TypeError: Invalid URL; input: 'postgres://postgres:***@db:5432/ordinal' and amqp://guest:***@mq:5672",
    );
  });

  it('masks password= parameters and leaves URLs without a password alone', () => {
    expect(maskCredentials('host=db password=s3cret user=x')).toBe('host=db password=*** user=x');
    expect(maskCredentials('postgres://postgres@db:5432/ordinal')).toBe(
      'postgres://postgres@db:5432/ordinal',
    );
    expect(maskCredentials('the form is postgres://<user>:<password>@<host>')).toBe(
      'the form is postgres://<user>:<password>@<host>',
    );
  });
});

describe('connectionUrlProblem', () => {
  it('accepts a URL, a percent-encoded password included', () => {
    expect(connectionUrlProblem('postgres://u@h:5432/db', 'DATABASE_URL', PG)).toBeNull();
    const encoded = `postgres://u:${encodeURIComponent(PASSWORD)}@h:5432/db`;
    expect(connectionUrlProblem(encoded, 'DATABASE_URL', PG)).toBeNull();
  });

  it.each([
    [`postgres://postgres:${PASSWORD}@db:5432/ordinal`, /not a valid URL: its user or password/],
    ['postgres://u:12#x@db:5432/ordinal', /not read as meant/],
    ['postgres://u:ab/c@db:5432/ordinal', /user or password has characters a URL reserves/],
    ['mysql://u@db/x', /must start with postgres:\/\/ or postgresql:\/\//],
    ['not a url', /DATABASE_URL is not a valid URL; the form is/],
  ])('names DATABASE_URL and what is wrong with %s, never its password', (raw, expected) => {
    const problem = connectionUrlProblem(raw, 'DATABASE_URL', PG);
    expect(problem).toMatch(expected);
    expect(problem).toMatch(/DATABASE_URL/);
    expect(problem).not.toContain('s#s');
    expect(problem).not.toContain('ab/c');
  });
});

describe('a URL from PG* settings', () => {
  it('percent-encodes each part, with libpq-like defaults', () => {
    const url = urlFromPgEnvironment(
      { PGHOST: 'db', PGUSER: 'app', PGPASSWORD: PASSWORD, PGDATABASE: 'store' },
      'ordinal',
    )!;
    expect(url).toBe(`postgres://app:${encodeURIComponent(PASSWORD)}@db:5432/store`);
    expect(decodeURIComponent(new URL(url).password)).toBe(PASSWORD);
    expect(urlFromPgEnvironment({ PGHOST: '::1' }, 'ordinal')).toBe(
      'postgres://postgres@[::1]:5432/ordinal',
    );
    expect(urlFromPgEnvironment({}, 'ordinal')).toBeNull();
  });

  it('puts PGPASSWORD into a DATABASE_URL that has none', () => {
    const url = withPassword('postgres://app@db:5432/store', PASSWORD);
    expect(decodeURIComponent(new URL(url).password)).toBe(PASSWORD);
    expect(withPassword('postgres://app:own@db/store', PASSWORD)).toBe(
      'postgres://app:own@db/store',
    );
  });
});
