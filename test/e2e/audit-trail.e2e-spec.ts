import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, rawHttp, startServer, waitFor, type TestServer } from '../support/test-server.js';

const RULES = `
rules:
  - principal: token:ops
    allow: [read, write]
  - principal: token:billing
    allow: [read, write]
    categories: ["invoice-*"]
audited: [employee]
`;

const ops = { authorization: 'Bearer ops-secret' };
const billing = { authorization: 'Bearer billing-secret' };

interface AuditRecord {
  kind: string;
  who: string | null;
  what: { method: string; route: string; url: string };
  status: number;
  code?: string;
  reason?: string;
  categories?: string[];
  from: { ip: string; userAgent?: string };
}

describe('the audit trail: admin operations, denials and audited reads, in $audit-*', () => {
  let db: TestDatabase;
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'ordinal-audit-'));
    writeFileSync(join(dir, 'access.yaml'), RULES);
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'ops:ops-secret:read+write+admin;billing:billing-secret:read+write',
      ORDINAL_ACCESS_RULES: join(dir, 'access.yaml'),
      ORDINAL_AUDIT: 'on',
    });
    const res = await http(
      server.baseUrl,
      'POST',
      '/api/streams/employee-1/events',
      { expectedVersion: 'no_stream', events: [{ eventType: 'EmployeeHired', data: {} }] },
      ops,
    );
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The audit records, as an admin reads them from the log. */
  const records = async (): Promise<AuditRecord[]> => {
    const page = await http(
      server.baseUrl,
      'GET',
      '/api/events?fromIndex=1&limit=10000',
      undefined,
      ops,
    );
    return page.body.messages
      .filter((m: { messageType: string }) => m.messageType.startsWith('$audit.'))
      .map((m: { body: AuditRecord; streamId: string }) => {
        expect(m.streamId).toMatch(/^\$audit-\d{4}-\d{2}-\d{2}$/);
        return m.body;
      });
  };
  /** The records of the requests sent with this user agent, once one is there. */
  const recordsOf = async (agent: string) =>
    waitFor(
      async () => {
        const mine = (await records()).filter((r) => r.from.userAgent === agent);
        return mine.length > 0 && mine;
      },
      10_000,
      `the audit record of ${agent}`,
    );

  it('records an admin operation once, with who, what and from where', async () => {
    const res = await http(
      server.baseUrl,
      'PUT',
      '/api/consumer-groups/audited-group',
      { source: { category: 'invoice' } },
      { ...ops, 'user-agent': 'audit-admin' },
    );
    expect(res.status).toBe(201);
    const mine = await recordsOf('audit-admin');
    expect(mine).toEqual([
      expect.objectContaining({
        kind: 'admin',
        who: 'token:ops',
        what: expect.objectContaining({ method: 'PUT', route: '/api/consumer-groups/:group' }),
        status: 201,
        from: expect.objectContaining({ ip: expect.any(String) }),
      }),
    ]);
  });

  it('records every denial once: no token, a missing scope, an access rule', async () => {
    const unknown = await rawHttp(server.baseUrl, 'GET', '/api/events/head', undefined, {
      authorization: 'Bearer wrong',
      'user-agent': 'audit-401',
    });
    expect(unknown.status).toBe(401);
    const scope = await http(
      server.baseUrl,
      'DELETE',
      '/api/consumer-groups/audited-group',
      undefined,
      {
        ...billing,
        'user-agent': 'audit-scope',
      },
    );
    expect(scope.status).toBe(403);
    const rule = await http(server.baseUrl, 'GET', '/api/streams/employee-1', undefined, {
      ...billing,
      'user-agent': 'audit-rule',
    });
    expect(rule.status).toBe(403);
    // A request with a body is refused on its headers, before the body is read
    const early = await rawHttp(
      server.baseUrl,
      'POST',
      '/api/consumer-groups/audited-group/parked/replay',
      { limit: 1 },
      { ...billing, 'user-agent': 'audit-early' },
    );
    expect(early.status).toBe(403);
    expect(await recordsOf('audit-early')).toEqual([
      expect.objectContaining({ kind: 'denied', who: 'token:billing', code: 'missing_scope' }),
    ]);
    expect(await recordsOf('audit-401')).toEqual([
      expect.objectContaining({
        kind: 'denied',
        who: null,
        status: 401,
        code: 'invalid_token',
        reason: 'unknown_token',
      }),
    ]);
    expect(await recordsOf('audit-scope')).toEqual([
      expect.objectContaining({
        kind: 'denied',
        who: 'token:billing',
        status: 403,
        code: 'missing_scope',
      }),
    ]);
    expect(await recordsOf('audit-rule')).toEqual([
      expect.objectContaining({
        kind: 'denied',
        who: 'token:billing',
        status: 403,
        code: 'access_denied',
      }),
    ]);
  });

  it('records a read of an audited category, and none of the others', async () => {
    const read = await http(server.baseUrl, 'GET', '/api/streams/employee-1', undefined, {
      ...ops,
      'user-agent': 'audit-read',
    });
    expect(read.status).toBe(200);
    const other = await http(server.baseUrl, 'GET', '/api/streams/audited-none', undefined, {
      ...ops,
      'user-agent': 'audit-unaudited',
    });
    expect(other.status).toBe(200);
    expect(await recordsOf('audit-read')).toEqual([
      expect.objectContaining({ kind: 'read', who: 'token:ops', categories: ['employee'] }),
    ]);
    // Every record so far once, and none of the unaudited read
    const all = await records();
    for (const agent of [
      'audit-admin',
      'audit-401',
      'audit-early',
      'audit-scope',
      'audit-rule',
      'audit-read',
    ])
      expect(all.filter((r) => r.from.userAgent === agent)).toHaveLength(1);
    expect(all.filter((r) => r.from.userAgent === 'audit-unaudited')).toEqual([]);
  });

  it('lets only the admin scope read the trail', async () => {
    // Given a principal whose rules cover every category but who is not an admin
    const page = await http(
      server.baseUrl,
      'GET',
      '/api/events?fromIndex=1&limit=10000',
      undefined,
      billing,
    );
    expect(page.status).toBe(200);
    expect(
      page.body.messages.filter((m: { messageType: string }) => m.messageType.startsWith('$audit')),
    ).toEqual([]);
    const day = new Date().toISOString().slice(0, 10);
    const stream = await http(
      server.baseUrl,
      'GET',
      `/api/streams/$audit-${day}`,
      undefined,
      billing,
    );
    expect(stream.status).toBe(403);
    // And an admin reads it as a stream, and pages through a stream list that ends on it
    const admin = await http(
      server.baseUrl,
      'GET',
      `/api/streams/${encodeURIComponent(`$audit-${day}`)}`,
      undefined,
      ops,
    );
    expect({ status: admin.status, some: (admin.body.events?.length ?? 0) > 0 }).toEqual({
      status: 200,
      some: true,
    });
    const first = await http(server.baseUrl, 'GET', '/api/streams?limit=1', undefined, ops);
    expect(first.body.next).toBe(`$audit-${day}`);
    const more = await http(
      server.baseUrl,
      'GET',
      `/api/streams?limit=1&after=${encodeURIComponent(first.body.next)}`,
      undefined,
      ops,
    );
    expect({
      status: more.status,
      streams: more.body.streams.map((s: { streamId: string }) => s.streamId),
    }).toEqual({
      status: 200,
      streams: ['employee-1'],
    });
  });
});
