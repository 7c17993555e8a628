import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  http,
  startServer,
  waitFor,
  type HttpResponse,
  type TestServer,
} from '../support/test-server.js';
import { assertConforms } from '../support/conformance.js';
import { OrdinalClient, memoryBookmark } from '@ordinal/client';
import { SseConnection } from '../support/sse-connection.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'ordinal-api';

const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });
/** Bound to tenant acme / globex (the tokens' fourth field). */
const acme = auth('acme-secret');
const globex = auth('globex-secret');
/** A trusted backend: the `tenants` scope, no tenant of its own. */
const backend = auth('backend-secret');
/** An operator: no tenant, the admin scope. */
const ops = auth('ops-secret');
/** Bound to acme, with the admin scope. */
const acmeAdmin = auth('acmeadmin-secret');
/** No tenant and no `tenants` scope. */
const plain = auth('plain-secret');

const TOKENS = [
  'acme:acme-secret:read+write:acme',
  'globex:globex-secret:read+write:globex',
  'backend:backend-secret:read+write+tenants',
  'ops:ops-secret:read+write+admin',
  'acmeadmin:acmeadmin-secret:read+write+admin:acme',
  'plain:plain-secret:read+write',
].join(';');

/** Another tenant's secret: none of it may ever reach acme's readers. */
const GLOBEX_SECRET = 'globex-body-secret-7f3a';
const GLOBEX_TYPE = 'GlobexOnlyHappened';

/**
 * A request with headers exactly as given, a name repeated where its value is an array (the
 * test helper's record cannot repeat one), checked against the OpenAPI document.
 */
function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: unknown,
): Promise<HttpResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const url = new URL(path, baseUrl);
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent: false,
        headers: {
          ...(payload === undefined
            ? {}
            : {
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(payload),
              }),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as unknown) : undefined,
            headers: new Headers(),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  }).then(async (res) => {
    await assertConforms(baseUrl, method, path, res);
    return res;
  });
}

describe('tenants: identities, the Ordinal-Tenant header, and every read and write filtered by tenant', () => {
  let db: TestDatabase;
  let server: TestServer;
  let dir: string;
  let signingKey: CryptoKey;

  const jwt = async (claims: JWTPayload) =>
    new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'svc', scope: 'read write', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(signingKey);

  const publish = (
    who: Record<string, string>,
    messageType: string,
    content: unknown,
    extra = {},
  ) => http(server.baseUrl, 'PUT', '/api/events/message', { messageType, content, ...extra }, who);

  /** Every message as an untenanted operator reads it. */
  const everything = async () =>
    (await http(server.baseUrl, 'GET', '/api/events?limit=10000', undefined, ops)).body
      .messages as { id: number; messageType: string; tenant?: string; body: unknown }[];

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'ordinal-tenants-'));
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    signingKey = privateKey;
    const jwksPath = join(dir, 'jwks.json');
    writeFileSync(
      jwksPath,
      JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
    );
    server = await startServer(db.url, {
      ORDINAL_TOKENS: TOKENS,
      ORDINAL_AUDIT: 'on',
      ORDINAL_HEARTBEAT_MS: '60000',
      ORDINAL_JWT_JWKS_URL: pathToFileURL(jwksPath).href,
      ORDINAL_JWT_ISSUER: ISSUER,
      ORDINAL_JWT_AUDIENCE: AUDIENCE,
      ORDINAL_JWT_TENANT_CLAIM: 'org',
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('pages and single reads', () => {
    const at: Record<string, number> = {};

    beforeAll(async () => {
      // Given messages of acme, globex and no tenant, interleaved
      for (const [name, who, type] of [
        ['a1', acme, 'OrderPlaced'],
        ['g1', globex, GLOBEX_TYPE],
        ['a2', acme, 'OrderPlaced'],
        ['n1', ops, 'Untenanted'],
        ['g2', globex, GLOBEX_TYPE],
        ['a3', acme, 'OrderShipped'],
      ] as const) {
        const res = await publish(
          who,
          type,
          { name, secret: who === globex ? GLOBEX_SECRET : name },
          { correlationId: 'shared-correlation' },
        );
        expect(res.status).toBe(201);
        at[name] = res.body.id;
      }
    });

    it('stores each message with its writer tenant and shows it on the wire', async () => {
      const all = await everything();
      const tenantOf = (name: string) => all.find((m) => m.id === at[name])?.tenant;
      expect(tenantOf('a1')).toBe('acme');
      expect(tenantOf('g1')).toBe('globex');
      expect(tenantOf('n1')).toBeUndefined();
      const rows = await db.query<{ index: string; tenant: string | null }>(
        'SELECT index, tenant FROM messages WHERE index = ANY($1::bigint[]) ORDER BY index',
        [[at.a1, at.g1, at.n1]],
      );
      expect(rows.map((r) => r.tenant)).toEqual(['acme', 'globex', null]);
    });

    it("a tenant's page holds only its messages, at their global indices (gaps where others are)", async () => {
      const page = await http(server.baseUrl, 'GET', '/api/events?limit=1000', undefined, acme);
      expect(page.status).toBe(200);
      const ids = page.body.messages.map((m: { id: number }) => m.id);
      expect(ids).toEqual([at.a1, at.a2, at.a3]);
      expect(page.body.messages.every((m: { tenant?: string }) => m.tenant === 'acme')).toBe(true);
      expect(JSON.stringify(page.body)).not.toContain(GLOBEX_SECRET);
      // The page moves on past the other tenants' positions
      expect(page.body.nextIndex).toBeGreaterThan(at.a3);
      // And a correlation read is filtered the same way
      const correlated = await http(
        server.baseUrl,
        'GET',
        '/api/events?correlationId=shared-correlation',
        undefined,
        globex,
      );
      expect(correlated.body.messages.map((m: { id: number }) => m.id)).toEqual([at.g1, at.g2]);
    });

    it("answers another tenant's index exactly as a missing one: 404, same body", async () => {
      const other = await http(server.baseUrl, 'GET', `/api/events/${at.g1}`, undefined, acme);
      const missing = await http(server.baseUrl, 'GET', '/api/events/999999', undefined, acme);
      expect(other.status).toBe(404);
      expect(missing.status).toBe(404);
      const shape = (body: Record<string, unknown>, index: number) => ({
        ...body,
        message: String(body.message).replace(String(index), 'N'),
      });
      expect(shape(other.body, at.g1)).toEqual(shape(missing.body, 999999));
      // An untenanted message is no tenant's either
      expect(
        (await http(server.baseUrl, 'GET', `/api/events/${at.n1}`, undefined, acme)).status,
      ).toBe(404);
      // Its own message it reads
      const own = await http(server.baseUrl, 'GET', `/api/events/${at.a1}`, undefined, acme);
      expect(own.body).toMatchObject({ id: at.a1, tenant: 'acme' });
    });

    it("a tenant's pull consumer (@ordinal/client) handles its messages only, each with ctx.tenant", async () => {
      const client = new OrdinalClient({ baseUrl: server.baseUrl, token: 'acme-secret' });
      const seen: [number, string | undefined, string | undefined][] = [];
      const consumer = client.consume({
        bookmark: memoryBookmark(0),
        endIndex: at.a3,
        handler: (message, ctx) => {
          seen.push([ctx.index, ctx.tenant, message.tenant]);
        },
      });
      await consumer.done;
      expect(seen).toEqual([
        [at.a1, 'acme', 'acme'],
        [at.a2, 'acme', 'acme'],
        [at.a3, 'acme', 'acme'],
      ]);
    });

    it('an untenanted operator sees every tenant, with the tenant field', async () => {
      const all = await everything();
      const mine = all.filter((m) => Object.values(at).includes(m.id));
      expect(mine.map((m) => m.tenant ?? null)).toEqual([
        'acme',
        'globex',
        'acme',
        null,
        'globex',
        'acme',
      ]);
      expect(
        (await http(server.baseUrl, 'GET', `/api/events/${at.g1}`, undefined, ops)).body.tenant,
      ).toBe('globex');
    });

    it('a trusted principal acts for the tenant it names, and for none without the header', async () => {
      const asAcme = await http(server.baseUrl, 'GET', '/api/events?limit=1000', undefined, {
        ...backend,
        'ordinal-tenant': 'acme',
      });
      expect(asAcme.body.messages.map((m: { id: number }) => m.id)).toEqual([at.a1, at.a2, at.a3]);
      const asNone = await http(
        server.baseUrl,
        'GET',
        '/api/events?limit=1000',
        undefined,
        backend,
      );
      expect(asNone.body.messages.length).toBeGreaterThanOrEqual(6);
      // Its write lands in the tenant it named
      const written = await http(
        server.baseUrl,
        'POST',
        '/api/events/messages',
        { messages: [{ messageType: 'BackendWrote', content: { n: 1 } }] },
        { ...backend, 'ordinal-tenant': 'globex' },
      );
      expect(written.status).toBe(201);
      expect(written.body.messages[0].tenant).toBe('globex');
      // A tenant's own token may name its own tenant
      const ownHeader = await http(server.baseUrl, 'GET', `/api/events/${at.a2}`, undefined, {
        ...acme,
        'ordinal-tenant': 'acme',
      });
      expect(ownHeader.status).toBe(200);
    });
  });

  describe('aggregate streams are per tenant', () => {
    const append = (
      who: Record<string, string>,
      streamId: string,
      expectedVersion: unknown,
      n: number,
    ) =>
      http(
        server.baseUrl,
        'POST',
        `/api/streams/${streamId}/events`,
        {
          expectedVersion,
          events: Array.from({ length: n }, (_, i) => ({
            eventType: who === globex ? GLOBEX_TYPE : 'OrderLine',
            data: { i, secret: who === globex ? GLOBEX_SECRET : 'acme' },
          })),
        },
        who,
      );

    it('two tenants append to order-1 at expectedVersion 0, and each reads its own versions', async () => {
      const a = await append(acme, 'order-1', 0, 3);
      const g = await append(globex, 'order-1', 0, 2);
      expect([a.status, a.body.version]).toEqual([201, 3]);
      expect([g.status, g.body.version]).toEqual([201, 2]);
      const readA = await http(server.baseUrl, 'GET', '/api/streams/order-1', undefined, acme);
      const readG = await http(server.baseUrl, 'GET', '/api/streams/order-1', undefined, globex);
      expect(readA.body.events.map((e: { version: number }) => e.version)).toEqual([1, 2, 3]);
      expect(readG.body.events.map((e: { version: number }) => e.version)).toEqual([1, 2]);
      expect(JSON.stringify(readA.body)).not.toContain(GLOBEX_SECRET);
      // A trusted principal reads the tenant it names; the stream of no tenant is another one
      const viaBackend = await http(
        server.baseUrl,
        'GET',
        '/api/streams/order-1/version',
        undefined,
        {
          ...backend,
          'ordinal-tenant': 'globex',
        },
      );
      expect(viaBackend.body.version).toBe(2);
      const untenanted = await http(
        server.baseUrl,
        'GET',
        '/api/streams/order-1/version',
        undefined,
        ops,
      );
      expect(untenanted.body.version).toBe(0);
      // Each message is its tenant's in the log, with the plain stream id
      const all = (await everything()) as unknown as {
        id: number;
        streamId?: string;
        tenant?: string;
      }[];
      const first = all.find((m) => m.id === a.body.firstIndex);
      expect(first).toMatchObject({ streamId: 'order-1', tenant: 'acme' });
    });

    it("a version conflict, metadata and a delete touch the tenant's own stream only", async () => {
      await append(acme, 'order-2', 'no_stream', 2);
      await append(globex, 'order-2', 'no_stream', 2);
      // A conflict in acme does not see globex's version
      const conflict = await append(acme, 'order-2', 5, 1);
      expect([conflict.status, conflict.body.current]).toEqual([409, 2]);
      // Acme's rule keeps one event of its order-2; globex's keeps both
      const meta = await http(
        server.baseUrl,
        'PUT',
        '/api/streams/order-2/metadata',
        { maxCount: 1 },
        acme,
      );
      expect(meta.status).toBe(200);
      expect(meta.body).toMatchObject({ streamId: 'order-2', tenant: 'acme', maxCount: 1 });
      const readG = await http(server.baseUrl, 'GET', '/api/streams/order-2', undefined, globex);
      expect(readG.body.events).toHaveLength(2);
      const readA = await http(server.baseUrl, 'GET', '/api/streams/order-2', undefined, acme);
      expect(readA.body.events.map((e: { version: number }) => e.version)).toEqual([2]);
      // Acme deletes its order-2: globex's stays
      const del = await http(server.baseUrl, 'DELETE', '/api/streams/order-2', undefined, acme);
      expect(del.status).toBe(204);
      expect(
        (await http(server.baseUrl, 'GET', '/api/streams/order-2', undefined, acme)).body.code,
      ).toBe('stream_deleted');
      expect(
        (await http(server.baseUrl, 'GET', '/api/streams/order-2', undefined, globex)).status,
      ).toBe(200);
      // Snapshots too
      const snap = await http(
        server.baseUrl,
        'PUT',
        '/api/streams/order-1/snapshot',
        { version: 2, state: { lines: 2 } },
        globex,
      );
      expect(snap.status).toBe(201);
      expect(
        (await http(server.baseUrl, 'GET', '/api/streams/order-1/snapshot', undefined, acme)).body
          .snapshot,
      ).toBeNull();
    });

    it('a tenant lists its own streams; an operator lists every stream with its tenant, page by page', async () => {
      const mine = await http(
        server.baseUrl,
        'GET',
        '/api/streams?prefix=order-',
        undefined,
        globex,
      );
      expect(mine.body.streams.map((s: { streamId: string }) => s.streamId)).toEqual([
        'order-1',
        'order-2',
      ]);
      expect(mine.body.streams.every((s: { tenant?: string }) => s.tenant === undefined)).toBe(
        true,
      );
      // A tenant cannot name another tenant's streams in prefix or after
      const qualified = await http(
        server.baseUrl,
        'GET',
        '/api/streams?prefix=acme/',
        undefined,
        globex,
      );
      expect(qualified.status).toBe(400);
      // The operator: a page of one at a time, continuing with `next`
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await http(
          server.baseUrl,
          'GET',
          `/api/streams?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}`,
          undefined,
          ops,
        );
        expect(res.status).toBe(200);
        for (const s of res.body.streams as { streamId: string; tenant?: string }[])
          seen.push(s.tenant ? `${s.tenant}:${s.streamId}` : s.streamId);
        after = res.body.next;
        if (!after) break;
      }
      expect(seen).toEqual(
        expect.arrayContaining(['acme:order-1', 'acme:order-2', 'globex:order-1']),
      );
      const acmeOnly = await http(
        server.baseUrl,
        'GET',
        '/api/streams?prefix=acme/',
        undefined,
        ops,
      );
      expect(
        acmeOnly.body.streams.map(
          (s: { streamId: string; tenant: string }) => `${s.tenant}:${s.streamId}`,
        ),
      ).toEqual(['acme:order-1', 'acme:order-2']);
    });
  });

  describe('idempotency keys and the duplicate window are per tenant', () => {
    it('the same key from two tenants stores two messages; a repeat within one returns the first', async () => {
      const key = 'order-42-placed';
      const a = await publish(acme, 'OrderPlaced', { n: 42 }, { idempotencyKey: key });
      const g = await publish(globex, 'OrderPlaced', { n: 42 }, { idempotencyKey: key });
      expect(a.status).toBe(201);
      expect(g.status).toBe(201);
      expect(g.body.id).not.toBe(a.body.id);
      // Each reads its key plain
      expect(a.body).toMatchObject({ idempotencyKey: key, tenant: 'acme' });
      expect(g.body).toMatchObject({ idempotencyKey: key, tenant: 'globex' });
      // A repeat is the tenant's own first message
      const again = await publish(globex, 'OrderPlaced', { n: 42 }, { idempotencyKey: key });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(g.body.id);
      // The same key with another message is reused for that tenant only, naming its own index
      const reused = await publish(acme, 'OrderPlaced', { n: 43 }, { idempotencyKey: key });
      expect(reused.status).toBe(422);
      expect(reused.body.id).toBe(a.body.id);
      const stored = await db.query<{ tenant: string }>(
        'SELECT tenant FROM messages WHERE index = ANY($1::bigint[]) ORDER BY index',
        [[a.body.id, g.body.id]],
      );
      expect(stored.map((r) => r.tenant)).toEqual(['acme', 'globex']);
    });
  });

  describe('the event stream of a tenant', () => {
    let before: number;
    const ids: Record<string, number> = {};

    beforeAll(async () => {
      before = (await http(server.baseUrl, 'GET', '/api/events/head', undefined, ops)).body.head;
      // Given catch-up history: acme, globex, globex, acme
      for (const [name, who] of [
        ['c1', acme],
        ['cg1', globex],
        ['cg2', globex],
        ['c2', acme],
      ] as const) {
        const res = await publish(who, who === globex ? GLOBEX_TYPE : 'StreamedA', {
          name,
          secret: who === globex ? GLOBEX_SECRET : name,
        });
        ids[name] = res.body.id;
      }
    });

    /** Asserts nothing of globex is in the stream's raw text. */
    const noGlobex = (conn: SseConnection) => {
      const raw = conn.blocks.join('\n\n');
      expect(raw).not.toContain(GLOBEX_SECRET);
      expect(raw).not.toContain(GLOBEX_TYPE);
      expect(raw).not.toContain('"tenant":"globex"');
      expect(raw).not.toContain('globex-ledger-9');
    };

    const streams: [string, string, Record<string, string>][] = [
      ['/api/events/stream as a tenant principal', '/api/events/stream', acme],
      [
        '/api/tenants/acme/events/stream as a trusted principal',
        '/api/tenants/acme/events/stream',
        backend,
      ],
    ];

    /** acme's messages after `before`, in order, as every acme stream must deliver them. */
    const acmeIds = () => [ids.c1, ids.c2, ...live];
    const live: number[] = [];

    it.each(streams)(
      '%s: catch-up and live, only its messages, with global indices, resuming across a gap',
      async (_name, path, who) => {
        // When acme's stream opens before the history
        const conn = await SseConnection.open(
          server.baseUrl,
          `${path}?startIndex=${before + 1}`,
          who,
        );
        try {
          expect(conn.status).toBe(200);
          const caughtUp = acmeIds();
          await conn.waitFor(
            () => conn.indices().includes(caughtUp.at(-1)!),
            10_000,
            'the catch-up',
          );
          // Then the catch-up holds acme's messages, not globex's between them: a gap
          expect(conn.indices()).toEqual(caughtUp);
          expect(ids.c1 < ids.cg1 && ids.cg2 < ids.c2).toBe(true);
          // And live: globex then acme publish; only acme's arrives
          const g = await publish(globex, GLOBEX_TYPE, {
            secret: GLOBEX_SECRET,
            live: live.length,
          });
          // And a globex stream event, whose stream id must not reach acme either
          const gs = await http(
            server.baseUrl,
            'POST',
            '/api/streams/globex-ledger-9/events',
            {
              expectedVersion: 'any',
              events: [{ eventType: GLOBEX_TYPE, data: { secret: GLOBEX_SECRET } }],
            },
            globex,
          );
          expect(gs.status).toBe(201);
          const a = await publish(acme, 'StreamedA', { live: live.length });
          live.push(a.body.id);
          await conn.waitFor(() => conn.indices().includes(a.body.id), 10_000, 'the live message');
          expect(conn.indices()).toEqual(acmeIds());
          expect(conn.indices()).not.toContain(g.body.id);
          const sent = conn.events.filter((e) => e.event === 'message');
          expect(sent.every((e) => e.data.message.tenant === 'acme')).toBe(true);
          // Each message's SSE id is its global index
          expect(sent.map((e) => Number(e.id))).toEqual(conn.indices());
          noGlobex(conn);
        } finally {
          conn.close();
        }
        // When it resumes after c1 (Last-Event-ID), across globex's positions
        const resumed = await SseConnection.open(server.baseUrl, path, {
          ...who,
          'last-event-id': String(ids.c1),
        });
        try {
          await resumed.waitFor(
            () => resumed.indices().includes(acmeIds().at(-1)!),
            10_000,
            'the resume',
          );
          // Then the next message is acme's c2, past the gap, and nothing of globex
          expect(resumed.indices()).toEqual(acmeIds().slice(1));
          noGlobex(resumed);
        } finally {
          resumed.close();
        }
      },
    );

    it('a stream ticket carries the tenant of the request that got it', async () => {
      const issued = await http(server.baseUrl, 'POST', '/api/events/stream-ticket', undefined, {
        ...backend,
        'ordinal-tenant': 'acme',
      });
      expect(issued.status).toBe(201);
      const conn = await SseConnection.open(
        server.baseUrl,
        `/api/events/stream?startIndex=${before + 1}&ticket=${encodeURIComponent(issued.body.ticket)}`,
        {},
      );
      try {
        await conn.waitFor(() => conn.indices().includes(ids.c2), 10_000, 'the catch-up');
        expect(conn.indices().slice(0, 2)).toEqual([ids.c1, ids.c2]);
        noGlobex(conn);
      } finally {
        conn.close();
      }
      // A tenant's ticket opens no other tenant's feed
      const own = await http(server.baseUrl, 'POST', '/api/events/stream-ticket', undefined, acme);
      const other = await SseConnection.open(
        server.baseUrl,
        `/api/tenants/globex/events/stream?ticket=${encodeURIComponent(own.body.ticket)}`,
        {},
      );
      try {
        expect(other.status).toBe(403);
        expect((await other.json()).code).toBe('tenant_forbidden');
      } finally {
        other.close();
      }
    });

    it.each([
      ['an untrusted principal of no tenant', plain, 'acme', 403, 'tenant_forbidden'],
      ["another tenant's principal", globex, 'acme', 403, 'tenant_forbidden'],
      ['a malformed tenant', backend, 'ac-me', 400, 'invalid_tenant'],
      ['a tenant too long', backend, 'a'.repeat(64), 400, 'invalid_tenant'],
    ] as const)(
      '/api/tenants/:tenant/events/stream refuses %s before sending anything',
      async (_name, who, tenant, status, code) => {
        const conn = await SseConnection.open(
          server.baseUrl,
          `/api/tenants/${tenant}/events/stream`,
          who,
        );
        try {
          expect(conn.status).toBe(status);
          const body = await conn.json();
          expect(body.code).toBe(code);
          expect(conn.events).toEqual([]);
        } finally {
          conn.close();
        }
      },
    );
  });

  describe('the Ordinal-Tenant header cannot switch tenant for a principal not allowed to', () => {
    /** [what, header value(s), acme's answer, plain's answer]; a status, or 'own' for acme's own tenant. */
    const TABLE: [string, string | string[], number | 'own', number, string?][] = [
      ['another tenant', 'globex', 403, 403, 'tenant_forbidden'],
      ['a case variant', 'ACME', 403, 403, 'tenant_forbidden'],
      ['a case variant', 'Acme', 403, 403, 'tenant_forbidden'],
      // Spaces around a header's value are not part of it (HTTP): the parser drops them
      ['spaces around its own', '  acme  ', 'own', 403, 'tenant_forbidden'],
      ['a space inside', 'ac me', 400, 400, 'invalid_tenant'],
      ['a qualified name', 'acme/x', 400, 400, 'invalid_tenant'],
      ['a list', 'acme,globex', 400, 400, 'invalid_tenant'],
      ['a list with a space', 'acme, globex', 400, 400, 'invalid_tenant'],
      ['the header repeated', ['acme', 'acme'], 400, 400, 'invalid_tenant'],
      ['the header repeated with another', ['acme', 'globex'], 400, 400, 'invalid_tenant'],
      ['10 kB', 'a'.repeat(10_240), 400, 400, 'invalid_tenant'],
      [
        'non-ASCII (UTF-8)',
        Buffer.from('acmé', 'utf8').toString('latin1'),
        400,
        400,
        'invalid_tenant',
      ],
      ['non-ASCII (Latin-1)', 'acm\u00e9', 400, 400, 'invalid_tenant'],
      ['empty', '', 400, 400, 'invalid_tenant'],
      ['a wildcard', '*', 400, 400, 'invalid_tenant'],
      ['a dash (a category separator)', 'acme-x', 400, 400, 'invalid_tenant'],
    ];

    const probes: { type: string; who: string }[] = [];

    it.each(TABLE)(
      '%s: a publish and a read are refused with the right code, never switched',
      async (_what, value, acmeAnswer, plainAnswer, code) => {
        for (const [who, headers, expected] of [
          ['acme', acme, acmeAnswer],
          ['plain', plain, plainAnswer],
        ] as const) {
          const type = `FuzzProbe${probes.length}`;
          probes.push({ type, who });
          const res = await rawRequest(
            server.baseUrl,
            'PUT',
            '/api/events/message',
            { ...headers, 'ordinal-tenant': value },
            { messageType: type, content: { who } },
          );
          const read = await rawRequest(server.baseUrl, 'GET', '/api/events?limit=1000', {
            ...headers,
            'ordinal-tenant': value,
          });
          if (expected === 'own') {
            expect(res.status).toBe(201);
            expect(res.body.tenant).toBe('acme');
            expect(read.status).toBe(200);
            expect(read.body.messages.every((m: { tenant?: string }) => m.tenant === 'acme')).toBe(
              true,
            );
          } else {
            expect([res.status, res.body.code]).toEqual([expected, code]);
            expect([read.status, read.body.code]).toEqual([expected, code]);
            if (expected === 400) expect(res.body.parameter).toBe('Ordinal-Tenant');
            // The answer never quotes a long value whole
            expect(JSON.stringify(res.body).length).toBeLessThan(1000);
          }
        }
      },
    );

    it('no probe landed in another tenant (the database, as its owner sees it)', async () => {
      const rows = await db.query<{ message_type: string; tenant: string | null }>(
        "SELECT message_type, tenant FROM messages WHERE message_type LIKE 'FuzzProbe%'",
      );
      // Only acme's own-tenant probe was stored, in acme
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        const probe = probes.find((p) => p.type === row.message_type);
        expect(probe?.who).toBe('acme');
        expect(row.tenant).toBe('acme');
      }
    });

    it('any header value: a tenant principal acts for its own tenant or is refused, never another (property)', async () => {
      const headerValue = fc.oneof(
        fc.constantFrom('acme', 'globex', 'ACME', 'acme.', 'acme_', '0', 'a'.repeat(63)),
        fc.stringMatching(/^[A-Za-z0-9_.\-/,*]{1,70}$/),
        fc.string({
          unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
          maxLength: 80,
        }),
      );
      const runs = Number(process.env.ORDINAL_PROPERTY_RUNS ?? 25);
      let run = 0;
      await fc.assert(
        fc.asyncProperty(headerValue, fc.boolean(), async (value, asPlain) => {
          const who = asPlain ? plain : acme;
          const type = 'PropertyProbe';
          const res = await rawRequest(
            server.baseUrl,
            'PUT',
            '/api/events/message',
            { ...who, 'ordinal-tenant': value },
            // A content of its own: never a duplicate-window repeat (202) of an earlier run
            { messageType: type, content: { value, run: run++ } },
          );
          if (res.status === 201) {
            // Only acme, naming its own tenant
            expect(asPlain).toBe(false);
            expect(value).toBe('acme');
            expect(res.body.tenant).toBe('acme');
          } else {
            expect([400, 403]).toContain(res.status);
            expect(res.body.code).toBe(res.status === 400 ? 'invalid_tenant' : 'tenant_forbidden');
          }
        }),
        { numRuns: runs },
      );
      const rows = await db.query<{ tenant: string | null }>(
        "SELECT DISTINCT tenant FROM messages WHERE message_type = 'PropertyProbe'",
      );
      expect(rows.every((r) => r.tenant === 'acme')).toBe(true);
    });

    it('operator routes refuse a tenant principal and a request naming a tenant', async () => {
      for (const [who, headers] of [
        ['acme', acme],
        ['backend naming acme', { ...backend, 'ordinal-tenant': 'acme' }],
        ['plain naming acme', { ...plain, 'ordinal-tenant': 'acme' }],
      ] as const) {
        const groups = await http(
          server.baseUrl,
          'GET',
          '/api/consumer-groups',
          undefined,
          headers,
        );
        expect([who, groups.status, groups.body.code]).toEqual([who, 403, 'tenant_forbidden']);
      }
      // A body to an operator route is refused before it is read, even with the admin scope
      const put = await http(
        server.baseUrl,
        'PUT',
        '/api/consumer-groups/g1',
        { source: { categories: ['order'] } },
        acmeAdmin,
      );
      expect([put.status, put.body.code]).toEqual([403, 'tenant_forbidden']);
      const scavenge = await http(
        server.baseUrl,
        'GET',
        '/api/admin/scavenge',
        undefined,
        acmeAdmin,
      );
      expect([scavenge.status, scavenge.body.code]).toEqual([403, 'tenant_forbidden']);
      // Its tenant's own log it reads
      expect((await http(server.baseUrl, 'GET', '/api/events', undefined, acmeAdmin)).status).toBe(
        200,
      );
      // And the operator still uses it without a header
      expect(
        (await http(server.baseUrl, 'GET', '/api/consumer-groups', undefined, ops)).status,
      ).toBe(200);
    });

    it('the audit trail records the denials, naming who and the tenant asked for', async () => {
      await http(server.baseUrl, 'GET', '/api/events?limit=1', undefined, {
        ...acme,
        'ordinal-tenant': 'globex',
        'user-agent': 'tenant-audit-probe',
      });
      const record = await waitFor(async () => {
        const all = await everything();
        return all
          .filter((m) => m.messageType === '$audit.denied')
          .map(
            (m) =>
              m.body as {
                who: string;
                code?: string;
                tenant?: string;
                from: { userAgent?: string };
              },
          )
          .find((b) => b.from.userAgent === 'tenant-audit-probe');
      });
      expect(record).toMatchObject({
        who: 'token:acme',
        code: 'tenant_forbidden',
        tenant: 'globex',
      });
      // And a tenant does not read the trail
      const page = await http(server.baseUrl, 'GET', '/api/events?limit=10000', undefined, acme);
      expect(
        page.body.messages.some((m: { messageType: string }) => m.messageType.startsWith('$audit')),
      ).toBe(false);
    });
  });

  describe('a JWT names its tenant in the configured claim', () => {
    it('acts for the claim tenant, refuses a malformed claim, and has no tenant without one', async () => {
      const bound = { authorization: `Bearer ${await jwt({ org: 'acme' })}` };
      const written = await publish(bound, 'JwtWrote', { n: 1 });
      expect(written.status).toBe(201);
      expect(written.body.tenant).toBe('acme');
      const switched = await publish({ ...bound, 'ordinal-tenant': 'globex' }, 'JwtWrote', {});
      expect([switched.status, switched.body.code]).toEqual([403, 'tenant_forbidden']);
      for (const org of ['ac-me', '', 42, ['acme'], null]) {
        const refused = await http(server.baseUrl, 'GET', '/api/events/head', undefined, {
          authorization: `Bearer ${await jwt({ org })}`,
        });
        expect([org, refused.status, refused.body.code, refused.body.reason]).toEqual([
          org,
          401,
          'invalid_token',
          'claims',
        ]);
      }
      const none = await publish(
        { authorization: `Bearer ${await jwt({})}` },
        'JwtWroteUntenanted',
        {},
      );
      expect(none.status).toBe(201);
      expect(none.body.tenant).toBeUndefined();
    });
  });
});
