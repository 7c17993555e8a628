import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startServer, waitFor, type TestServer } from '../support/test-server.js';
import { checkedHttp } from '../support/conformance.js';
import { SseConnection } from '../support/sse-connection.js';

describe('browser auth for EventSource: short-lived, single-use stream tickets', () => {
  let db: TestDatabase;
  let server: TestServer;
  const reader = { authorization: 'Bearer read-secret' };
  const writer = { authorization: 'Bearer write-secret' };

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS:
        'reader:read-secret:read;writer:write-secret:write;admin:admin-secret:read+write+admin',
      // Long enough for a loaded machine to use a ticket before it expires; short for the expiry test.
      ORDINAL_STREAM_TICKET_TTL_MS: '3000',
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const ticket = async () => {
    const res = await checkedHttp(
      server.baseUrl,
      'POST',
      '/api/events/stream-ticket',
      undefined,
      reader,
    );
    expect(res.status).toBe(201);
    return res.body as { ticket: string; expiresAt: string; expiresInMs: number };
  };

  it('opens the stream with ?ticket= and no Authorization header, once', async () => {
    // Given a ticket issued to a read token
    const { ticket: t, expiresInMs } = await ticket();
    expect(expiresInMs).toBe(3000);
    // When an EventSource-like request (no header) uses it
    const stream = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=1&ticket=${encodeURIComponent(t)}`,
      {},
    );
    // Then the stream opens
    expect(stream.status).toBe(200);
    await stream.waitFor(
      () => stream.events.some((e) => e.event === 'connected'),
      5000,
      'connected',
    );
    stream.close();
    // And the same ticket does not open another
    const again = await checkedHttp(
      server.baseUrl,
      'GET',
      `/api/events/stream?ticket=${encodeURIComponent(t)}`,
      undefined,
      {},
    );
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({
      statusCode: 401,
      code: 'invalid_stream_ticket',
      message: expect.stringMatching(/stream ticket/),
    });
  });

  it('refuses an expired, forged or misplaced ticket', async () => {
    const { ticket: t, expiresAt } = await ticket();
    // A forged one: the payload changed, the signature kept
    const [payload, signature] = t.split('.');
    const forged = `${Buffer.from(Buffer.from(payload, 'base64url').toString().replace('reader', 'writer')).toString('base64url')}.${signature}`;
    expect(
      (
        await checkedHttp(
          server.baseUrl,
          'GET',
          `/api/events/stream?ticket=${forged}`,
          undefined,
          {},
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await checkedHttp(
          server.baseUrl,
          'GET',
          '/api/events/stream?ticket=nonsense',
          undefined,
          {},
        )
      ).status,
    ).toBe(401);
    // Only the stream takes tickets
    expect(
      (await checkedHttp(server.baseUrl, 'GET', `/api/events/head?ticket=${t}`, undefined, {}))
        .status,
    ).toBe(401);
    // An expired one (its expiry is a clock deadline: wait for the clock, not for an event)
    await waitFor(() => Date.now() > Date.parse(expiresAt) + 5, 5000, 'the ticket to expire');
    expect(
      (await checkedHttp(server.baseUrl, 'GET', `/api/events/stream?ticket=${t}`, undefined, {}))
        .status,
    ).toBe(401);
  });

  it('is issued only to a token with the read scope, and the header still works beside it', async () => {
    expect(
      (await checkedHttp(server.baseUrl, 'POST', '/api/events/stream-ticket', undefined, writer))
        .status,
    ).toBe(403);
    expect(
      (await checkedHttp(server.baseUrl, 'POST', '/api/events/stream-ticket', undefined, {}))
        .status,
    ).toBe(401);
    const stream = await SseConnection.open(
      server.baseUrl,
      '/api/events/stream?startIndex=1',
      reader,
    );
    expect(stream.status).toBe(200);
    stream.close();
  });

  it("opens a consumer group member's stream with ?ticket= (a browser member), once", async () => {
    // Given a group with one event, and a ticket issued to a read token
    const admin = { authorization: 'Bearer admin-secret' };
    const put = await checkedHttp(
      server.baseUrl,
      'PUT',
      '/api/consumer-groups/browser',
      { source: { types: ['Browsed'] } },
      admin,
    );
    expect(put.status).toBe(201);
    const posted = await checkedHttp(
      server.baseUrl,
      'POST',
      '/api/events/messages',
      { messages: [{ messageType: 'Browsed', content: { n: 1 } }] },
      writer,
    );
    expect(posted.status).toBe(201);
    const { ticket: t } = await ticket();
    // When an EventSource-like request (no header) opens the member's stream with it
    const stream = await SseConnection.open(
      server.baseUrl,
      `/api/consumer-groups/browser/stream?memberId=tab-1&ticket=${encodeURIComponent(t)}`,
      {},
    );
    try {
      // Then the lease comes, then the event
      expect(stream.status).toBe(200);
      await stream.waitFor(
        () => stream.events.some((e) => e.event === 'message'),
        10_000,
        'the event',
      );
      expect(stream.events[0]).toEqual({ event: 'lease', data: { memberId: 'tab-1', epoch: 1 } });
    } finally {
      stream.close();
    }
    // And the ticket does not open the stream again
    const again = await checkedHttp(
      server.baseUrl,
      'GET',
      `/api/consumer-groups/browser/stream?memberId=tab-2&ticket=${encodeURIComponent(t)}`,
      undefined,
      {},
    );
    expect([again.status, (again.body as { code?: string }).code]).toEqual([
      401,
      'invalid_stream_ticket',
    ]);
  });
});
