import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  SignJWT,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import { createHmac } from 'node:crypto';
import { createApp, listen } from '../../apps/eventstore/src/create-app.js';
import { loadConfig } from '../../apps/eventstore/src/config/ordinal-config.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, rawHttp } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'ordinal-api';

/** Every line the server logs, to check no token's signature is in any. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (...args: unknown[]) => void this.lines.push(args.map(String).join(' '));
  error = this.log;
  warn = this.log;
  debug = this.log;
  verbose = this.log;
}

interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256' | 'EdDSA';
  privateKey: CryptoKey;
  publicJwk: JWK;
  publicKey: CryptoKey;
}

async function signingKey(kid: string, alg: SigningKey['alg']): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return {
    kid,
    alg,
    privateKey,
    publicKey,
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg },
  };
}

describe('JWT bearer tokens verified against a JWKS, beside static tokens', () => {
  let db: TestDatabase;
  let app: NestFastifyApplication;
  let baseUrl: string;
  let dir: string;
  let jwksPath: string;
  const logger = new CapturingLogger();
  let rsa: SigningKey;
  let ec: SigningKey;
  let ed: SigningKey;
  const signatures: string[] = [];

  const writeJwks = (keys: SigningKey[]) =>
    writeFileSync(jwksPath, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));

  const jwt = async (
    key: SigningKey,
    claims: JWTPayload = {},
    options: { expiresIn?: string | number; notBefore?: string | number } = {},
  ) => {
    let builder = new SignJWT({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'alice',
      scope: 'read write',
      ...claims,
    })
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '5m');
    if (options.notBefore !== undefined) builder = builder.setNotBefore(options.notBefore);
    const token = await builder.sign(key.privateKey);
    signatures.push(token.split('.')[2]);
    return token;
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'ordinal-jwks-'));
    jwksPath = join(dir, 'jwks.json');
    [rsa, ec, ed] = await Promise.all([
      signingKey('rsa-1', 'RS256'),
      signingKey('ec-1', 'ES256'),
      signingKey('ed-1', 'EdDSA'),
    ]);
    writeJwks([rsa, ec, ed]);
    writeFileSync(
      join(dir, 'access.yaml'),
      [
        'rules:',
        '  - principal: jwt:alice',
        '    allow: [read, write]',
        '  - principal: group:billing',
        '    allow: [read, write]',
        '    categories: ["invoice-*"]',
        '  - principal: token:machine',
        '    allow: [read]',
      ].join('\n'),
    );
    const config = loadConfig({
      ORDINAL_ENV: 'development',
      DATABASE_URL: db.url,
      PORT: '0',
      AMQP_URL: '',
      ORDINAL_TOKENS: 'machine:machine-secret:read',
      ORDINAL_JWT_JWKS_URL: pathToFileURL(jwksPath).href,
      ORDINAL_JWT_ISSUER: ISSUER,
      ORDINAL_JWT_AUDIENCE: AUDIENCE,
      ORDINAL_JWT_CLOCK_SKEW_SECONDS: '5',
      // An unknown kid re-reads the key set at once (the default waits 30 s between reads).
      ORDINAL_JWT_JWKS_COOLDOWN_MS: '0',
      ORDINAL_ACCESS_RULES: join(dir, 'access.yaml'),
    });
    app = await createApp(config, { logger, openApiUi: false });
    await listen(app, 0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
    // No log line carries any token's signature.
    for (const signature of signatures)
      expect(logger.lines.filter((line) => line.includes(signature))).toEqual([]);
  });

  const refusal = async (token: string, reason: string) => {
    const res = await http(baseUrl, 'GET', '/api/events/head', undefined, bearer(token));
    expect({ status: res.status, code: res.body?.code, reason: res.body?.reason }).toEqual({
      status: 401,
      code: 'invalid_token',
      reason,
    });
    expect(JSON.stringify(res.body)).not.toContain(token.split('.')[2] || token.slice(-16));
  };

  it('accepts a valid RS256, ES256 and EdDSA token with its scopes, and a static token beside them', async () => {
    // Given tokens signed by each allowed algorithm, scoped read+write
    for (const key of [rsa, ec, ed]) {
      const token = await jwt(key);
      // When it writes and reads
      const put = await http(
        baseUrl,
        'PUT',
        '/api/events/message',
        { messageType: 'JwtWritten', content: { alg: key.alg } },
        bearer(token),
      );
      // Then both are allowed
      expect(put.status).toBe(201);
      const read = await http(
        baseUrl,
        'GET',
        `/api/events/${put.body.id}`,
        undefined,
        bearer(token),
      );
      expect(read.status).toBe(200);
    }
    // And a static token still authenticates in the same guard
    const head = await http(
      baseUrl,
      'GET',
      '/api/events/head',
      undefined,
      bearer('machine-secret'),
    );
    expect(head.status).toBe(200);
  });

  it('refuses a scope the token lacks with 403 missing_scope', async () => {
    const token = await jwt(rsa, { scope: 'read' });
    const res = await http(
      baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'NotAllowed', content: {} },
      bearer(token),
    );
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      code: 'missing_scope',
      message: expect.stringContaining('jwt:alice'),
    });
  });

  it("applies access rules to a JWT's subject and groups claim", async () => {
    // Given carol, whose groups claim holds billing (invoice-* only)
    const carol = await jwt(ec, { sub: 'carol', groups: ['billing', 'other'] });
    const append = (streamId: string) =>
      http(
        baseUrl,
        'POST',
        `/api/streams/${streamId}/events`,
        { expectedVersion: 'any', events: [{ eventType: 'Noted', data: {} }] },
        bearer(carol),
      );
    // Then she writes invoices and nothing else
    expect((await append('invoice-9')).status).toBe(201);
    const denied = await append('employee-9');
    expect(denied.body).toMatchObject({
      code: 'access_denied',
      message: expect.stringContaining('jwt:carol'),
    });
    // And dave, in no group a rule names, may do nothing
    const dave = await jwt(ec, { sub: 'dave', groups: ['sales'] });
    const read = await http(baseUrl, 'GET', '/api/streams/invoice-9', undefined, bearer(dave));
    expect({ status: read.status, code: read.body.code }).toEqual({
      status: 403,
      code: 'access_denied',
    });
  });

  it('maps scopes from an scp array', async () => {
    const token = await jwt(rsa, { scope: undefined, scp: ['read', 'unrelated'] });
    const ok = await http(baseUrl, 'GET', '/api/events/head', undefined, bearer(token));
    expect(ok.status).toBe(200);
  });

  it('refuses an expired token, one not yet valid, and a wrong issuer or audience, each with its reason', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refusal(await jwt(rsa, {}, { expiresIn: now - 60 }), 'expired');
    await refusal(await jwt(rsa, {}, { notBefore: now + 600 }), 'not_yet_valid');
    await refusal(await jwt(rsa, { iss: 'https://evil.example.test/' }), 'issuer');
    await refusal(await jwt(rsa, { aud: 'another-api' }), 'audience');
    // Within the clock skew, an expiry just passed is still accepted
    const skewed = await jwt(rsa, {}, { expiresIn: now - 1 });
    expect((await http(baseUrl, 'GET', '/api/events/head', undefined, bearer(skewed))).status).toBe(
      200,
    );
  });

  it('refuses an unknown kid, then accepts it once the JWKS is rotated to include it', async () => {
    // Given a key the JWKS does not list yet
    const rotated = await signingKey('rsa-2', 'RS256');
    const token = await jwt(rotated);
    await refusal(token, 'unknown_key');
    // When the identity provider rotates its keys
    writeJwks([rotated, ec, ed]);
    // Then the server re-reads the key set on the unknown kid and accepts the token
    const res = await http(baseUrl, 'GET', '/api/events/head', undefined, bearer(token));
    expect(res.status).toBe(200);
  });

  it('refuses alg none, HS256 signed with the public key as secret, a forged signature and a huge token', async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = {
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'mallory',
      scope: 'read write admin',
      exp: Math.floor(Date.now() / 1000) + 300,
    };
    // alg none: unsigned
    await refusal(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`, 'algorithm');
    // The classic confusion: HMAC with the RSA public key (as PEM) as the shared secret
    const pem = await exportSPKI(ec.publicKey);
    const header = b64({ alg: 'HS256', typ: 'JWT', kid: ec.kid });
    const payload = b64(claims);
    const mac = createHmac('sha256', pem).update(`${header}.${payload}`).digest('base64url');
    await refusal(`${header}.${payload}.${mac}`, 'algorithm');
    // A valid token whose payload was changed after signing
    const [h, , s] = (await jwt(ec)).split('.');
    await refusal(`${h}.${payload}.${s}`, 'signature');
    // Over ORDINAL_JWT_MAX_BYTES (8192 by default), refused unread
    const huge = await jwt(ec, { padding: 'x'.repeat(9000) });
    await refusal(huge, 'too_large');
    // And no token at all, or garbage
    const none = await rawHttp(baseUrl, 'GET', '/api/events/head', undefined, {});
    expect(none.body).toMatchObject({ code: 'invalid_token', reason: 'missing' });
    await refusal('not-a-token', 'unknown_token');
  });

  it('issues a stream ticket carrying the JWT identity, expiring no later than the JWT', async () => {
    // Given a read-only JWT that expires in 10 s
    const token = await jwt(
      ec,
      { scope: 'read' },
      { expiresIn: Math.floor(Date.now() / 1000) + 10 },
    );
    const issued = await http(
      baseUrl,
      'POST',
      '/api/events/stream-ticket',
      undefined,
      bearer(token),
    );
    expect(issued.status).toBe(201);
    // Then the ticket lives no longer than the JWT (the ticket TTL is 30 s)
    expect(issued.body.expiresInMs).toBeLessThanOrEqual(10_000);
    // And it opens the stream, once
    const stream = await SseConnection.open(
      baseUrl,
      `/api/events/stream?startIndex=1&ticket=${encodeURIComponent(issued.body.ticket)}`,
      {},
    );
    expect(stream.status).toBe(200);
    await stream.waitFor(
      () => stream.events.some((e) => e.event === 'connected'),
      5000,
      'connected',
    );
    stream.close();
  });
});
