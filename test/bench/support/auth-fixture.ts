import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

/** What a server measured with JWT authentication and access rules needs. */
export interface AuthFixture {
  /** The server's environment: a file: JWKS, issuer, audience, 50 rules. */
  env: Record<string, string>;
  /** `Authorization: Bearer <JWT>` of the principal the rules are checked for. */
  headers: Record<string, string>;
}

/**
 * `BENCH_AUTH=jwt-rules` of bench:ingest and bench:read: an ES256 key set in a file, a JWT
 * (subject `bench-client`, groups `bench`, scopes read and write, no admin: readers also get
 * the audit category's filter), and 50 access rules: 40 for other principals, then 10 of the
 * group `bench` whose first 9 name categories no bench message has and whose last allows the
 * bench's types, so every message is checked against all ten.
 */
export async function authFixture(): Promise<AuthFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-bench-auth-'));
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-1', alg: 'ES256' };
  const jwksPath = join(dir, 'jwks.json');
  writeFileSync(jwksPath, JSON.stringify({ keys: [jwk] }));
  const issuer = 'https://idp.bench.test/';
  const audience = 'ordinal-bench';
  const token = await new SignJWT({ scope: 'read write', groups: ['bench'] })
    .setProtectedHeader({ alg: 'ES256', kid: 'bench-1' })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject('bench-client')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);
  const rules: string[] = [];
  for (let i = 0; i < 40; i++)
    rules.push(
      `  - principal: ${i % 2 ? `jwt:user-${i}` : `group:team-${i}`}\n    allow: [read, write]\n    categories: ["cat${i}-*"]`,
    );
  for (let i = 0; i < 9; i++)
    rules.push(
      `  - principal: group:bench\n    allow: [read, write]\n    categories: ["other${i}-*", "more${i}"]`,
    );
  rules.push(
    `  - principal: group:bench\n    allow: [read, write]\n    types: ["Order*", "StartMarker"]`,
  );
  const rulesPath = join(dir, 'access.yaml');
  writeFileSync(rulesPath, `rules:\n${rules.join('\n')}\n`);
  return {
    env: {
      ORDINAL_JWT_JWKS_URL: pathToFileURL(jwksPath).href,
      ORDINAL_JWT_ISSUER: issuer,
      ORDINAL_JWT_AUDIENCE: audience,
      ORDINAL_ACCESS_RULES: rulesPath,
    },
    headers: { authorization: `Bearer ${token}` },
  };
}
