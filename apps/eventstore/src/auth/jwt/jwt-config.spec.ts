import { loadJwtConfig } from './jwt-config.js';

const base = {
  ORDINAL_JWT_JWKS_URL: 'https://idp.example.test/.well-known/jwks.json',
  ORDINAL_JWT_ISSUER: 'https://idp.example.test/',
  ORDINAL_JWT_AUDIENCE: 'ordinal',
};

describe('loadJwtConfig', () => {
  it('is off without a JWKS URL, and refuses other JWT settings without one', () => {
    expect(loadJwtConfig({})).toBeNull();
    expect(() => loadJwtConfig({ ORDINAL_JWT_ISSUER: 'x' })).toThrow(/ORDINAL_JWT_JWKS_URL/);
  });

  it('defaults to the asymmetric algorithms, 30 s of skew and the scope/scp claims', () => {
    expect(loadJwtConfig(base)).toMatchObject({
      algorithms: ['RS256', 'ES256', 'EdDSA'],
      clockSkewSeconds: 30,
      scopeClaim: null,
      subjectClaim: 'sub',
      groupsClaim: 'groups',
      tenantClaim: 'tenant',
      maxTokenBytes: 8192,
    });
  });

  it('refuses none, HMAC, a plain-http key set and a missing issuer or audience', () => {
    expect(() => loadJwtConfig({ ...base, ORDINAL_JWT_ALGORITHMS: 'RS256,none' })).toThrow(/none/);
    expect(() => loadJwtConfig({ ...base, ORDINAL_JWT_ALGORITHMS: 'HS256' })).toThrow(/HS256/);
    expect(() =>
      loadJwtConfig({ ...base, ORDINAL_JWT_JWKS_URL: 'http://idp.example.test/jwks' }),
    ).toThrow(/https: or file:/);
    expect(() => loadJwtConfig({ ...base, ORDINAL_JWT_AUDIENCE: '' })).toThrow(/AUDIENCE/);
  });
});
