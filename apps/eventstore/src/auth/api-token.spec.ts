import { TokenMatcher, parseTokens } from './api-token.js';

describe('TokenMatcher', () => {
  const matcher = new TokenMatcher(parseTokens('a:alpha-secret:read;b:beta-secret:write'));

  it('finds the token a secret belongs to', () => {
    expect(matcher.match('beta-secret')?.name).toBe('b');
    expect(matcher.match('alpha-secret')?.name).toBe('a');
  });

  it('matches nothing for a wrong, prefixed or empty secret', () => {
    expect(matcher.match('alpha')).toBeNull();
    expect(matcher.match('alpha-secret-x')).toBeNull();
    expect(matcher.match('')).toBeNull();
  });

  it('matches exactly as before once a secret has been remembered', () => {
    const fresh = new TokenMatcher(parseTokens('a:alpha-secret:read;b:beta-secret:write'));
    expect(fresh.match('alpha-secret')?.name).toBe('a');
    // The repeat (now a map lookup) still finds the right token, and near misses still fail
    expect(fresh.match('alpha-secret')?.name).toBe('a');
    expect(fresh.match('beta-secret')?.name).toBe('b');
    expect(fresh.match('alpha-secret ')).toBeNull();
    expect(fresh.match('alpha-secreT')).toBeNull();
  });
});

describe('parseTokens', () => {
  it("reads a tenant as an entry's fourth field, and none without one", () => {
    const [bound, free] = parseTokens('a:alpha-secret:read+write:acme;b:beta-secret:read+tenants');
    expect(bound).toMatchObject({ name: 'a', tenant: 'acme', scopes: new Set(['read', 'write']) });
    expect(free.tenant).toBeUndefined();
    expect(free.scopes.has('tenants')).toBe(true);
  });

  it('refuses a tenant that is not a tenant id, an empty one, and a tenant with the tenants scope', () => {
    expect(() => parseTokens('a:s:read:ac-me')).toThrow(/not a tenant id/);
    expect(() => parseTokens('a:s:read:')).toThrow(/name:secret:scope\+scope:tenant/);
    expect(() => parseTokens('a:s:read:acme:more')).toThrow(/entry #1/);
    expect(() => parseTokens('a:s:read+tenants:acme')).toThrow(/tenants scope/);
  });
});
