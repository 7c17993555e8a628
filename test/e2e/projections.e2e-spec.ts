import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { RawWriter } from '../support/projections-app.js';

describe('Projections API: status, read-your-own-writes, rebuild, metrics (concurrent mode)', () => {
  let db: TestDatabase;
  let server: TestServer;
  const seen: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_ORDERING: 'concurrent',
      ORDINAL_GAP_TIMEOUT_MS: '60000',
      ORDINAL_TOKENS: 'reader:reader-secret:read',
    });
    // A subscription from code inside the server's application
    server.app
      .get(SubscriptionsService)
      .subscribe({ name: 'audit', stream: '$all', handle: (m) => void seen.push(m.id) });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('lists subscriptions with position, head, lag and state; ?atLeast waits for a fresh write', async () => {
    // Given a message just written
    const put = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Audited',
      content: { n: 1 },
    });
    expect(put.status).toBe(201);
    // When the status is asked for at least its index
    const res = await http(
      server.baseUrl,
      'GET',
      `/api/projections?atLeast=${put.body.id}&timeoutMs=5000`,
    );
    // Then it answers once the subscription has applied it
    expect(res.status).toBe(200);
    expect(res.body.reached).toBe(true);
    const audit = res.body.projections.find((p: { name: string }) => p.name === 'audit');
    expect(audit).toMatchObject({
      kind: 'subscription',
      stream: '$all',
      state: 'running',
      lastError: null,
      watermarked: true,
    });
    expect(audit.position).toBeGreaterThanOrEqual(put.body.id);
    expect(audit.lag).toBe(audit.head - audit.position);
    expect(seen).toContain(put.body.id);
    expect(res.body.watermark).toMatchObject({
      ordering: 'concurrent',
      gapTimeoutMs: 60000,
      exactRelease: true,
      heldHole: null,
    });
    // And an index nobody reaches in time says so
    const late = await http(
      server.baseUrl,
      'GET',
      `/api/projections/audit?atLeast=${put.body.id + 1000}&timeoutMs=100`,
    );
    expect(late.status).toBe(200);
    expect(late.body.reached).toBe(false);
    expect((await http(server.baseUrl, 'GET', '/api/projections/nope')).status).toBe(404);
  });

  it('shows a held hole with the oldest writer holding it, in the status and in /metrics', async () => {
    // Given a writer holding a lower position open while another category commits above it
    const a = await RawWriter.open(db.url, 'slow-writer');
    const b = await RawWriter.open(db.url, 'fast-writer');
    try {
      await a.begin();
      const [pa] = await a.insert('order');
      await b.begin();
      const [pb] = await b.insert('invoice');
      await b.commit();
      // When the status is read
      const held = await waitFor(
        async () => {
          const res = await http(server.baseUrl, 'GET', '/api/projections');
          return res.body.watermark.heldHole ? res.body.watermark : null;
        },
        10_000,
        'the held hole',
      );
      // Then it names the position, the time held and the backend of the writer
      expect(held.heldHole).toMatchObject({
        from: pa,
        to: pa,
        oldestWriter: {
          applicationName: 'slow-writer',
          pid: expect.any(Number),
          xactStart: expect.any(String),
        },
      });
      expect(held.position).toBe(pa - 1);
      const metrics = await fetch(`${server.baseUrl}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(/ordinal_watermark_hole_age_seconds \d/);
      expect(metrics).toMatch(/ordinal_subscription_lag\{name="audit",kind="subscription"\} \d+/);
      expect(metrics).toMatch(/ordinal_watermark_holes_held_total [1-9]/);
      // When the writer commits, the subscription reaches both
      await a.commit();
      const res = await http(server.baseUrl, 'GET', `/api/projections/audit?atLeast=${pb}`);
      expect(res.body.reached).toBe(true);
      expect(seen.filter((i) => i === pa || i === pb)).toEqual([pa, pb]);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('rebuild needs the admin scope and replays from the start', async () => {
    const reader = { authorization: 'Bearer reader-secret' };
    expect(
      (await http(server.baseUrl, 'POST', '/api/projections/audit/rebuild', undefined, reader))
        .status,
    ).toBe(403);
    expect((await http(server.baseUrl, 'GET', '/api/projections', undefined, reader)).status).toBe(
      200,
    );
    const before = seen.length;
    const res = await http(server.baseUrl, 'POST', '/api/projections/audit/rebuild');
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ name: 'audit', state: expect.any(String) });
    const head = res.body.liveFrom;
    expect(
      (await http(server.baseUrl, 'GET', `/api/projections/audit?atLeast=${head}`)).body.reached,
    ).toBe(true);
    // Every message was delivered again (at-least-once: a subscription from code has no read model to clear)
    expect(seen.length).toBeGreaterThanOrEqual(before * 2);
  });
});
