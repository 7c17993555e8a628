import { LiveRouter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

describe('SSE streams across processes, under slow readers and at shutdown (L5, R3, R5)', () => {
  let db: TestDatabase;
  const servers: TestServer[] = [];
  const connections: SseConnection[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const server = await startServer(db.url, { ORDINAL_DUPLICATE_WINDOW: '0', ...env });
    servers.push(server);
    return server;
  };
  const connect = async (server: TestServer, path: string) => {
    const connection = await SseConnection.open(server.baseUrl, path, DEV_AUTH);
    connections.push(connection);
    return connection;
  };
  const head = async () =>
    Number(
      (await db.query<{ head: string }>('SELECT coalesce(max(index), 0) AS head FROM messages'))[0]
        .head,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const c of connections) c.close();
    for (const s of servers) await s.close().catch(() => undefined);
    await db?.drop();
  });

  it('delivers a message ingested by a second server process to a stream held by the first', async () => {
    // Given two servers on one database, each with its own pool; the first polls only every minute
    const first = await start({ ORDINAL_LIVE_POLL_MS: '60000' });
    const second = await start({ ORDINAL_LIVE_POLL_MS: '60000' });
    const from = (await head()) + 1;
    const stream = await connect(first, `/api/events/stream?startIndex=${from}`);
    await stream.waitFor(() => stream.events.length > 0, 5000, 'connected');
    // When the second server stores messages
    const one = await http(second.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'FromSecond',
      content: { n: 1 },
    });
    const batch = await http(second.baseUrl, 'POST', '/api/events/messages', {
      messages: [
        { messageType: 'FromSecond', content: { n: 2 } },
        { messageType: 'FromSecond', content: { n: 3 } },
      ],
    });
    expect(one.status).toBe(201);
    expect(batch.status).toBe(201);
    // Then the first server's stream gets them (woken by NOTIFY), in order
    const last = batch.body.messages[1].id;
    await stream.waitFor(
      () => stream.indices().includes(last),
      5000,
      "the second server's messages",
    );
    const received = stream.events.filter((e) => e.event === 'message').map((e) => e.data.message);
    expect(received.filter((m) => m.messageType === 'FromSecond').map((m) => m.id)).toEqual([
      one.body.id,
      last - 1,
      last,
    ]);
    expect(stream.indices()).toEqual(Array.from({ length: last - from + 1 }, (_, i) => from + i));
  });

  it('lets a reader that stops reading fall behind with bounded memory and later get everything', async () => {
    // Given a server whose streams buffer at most 50 live messages, and a stream that stops reading
    const server = await start({ ORDINAL_STREAM_MAILBOX: '50' });
    const router = server.app.get(LiveRouter);
    const from = (await head()) + 1;
    const stream = await connect(server, `/api/events/stream?startIndex=${from}`);
    await stream.waitFor(() => stream.events.length > 0, 5000, 'connected');
    stream.pause();
    const overflowsBefore = router.stats().overflows;
    // When about 16 MB of messages land while it does not read
    const padding = 'x'.repeat(1000);
    let batches = 0;
    while (router.stats().overflows === overflowsBefore && batches < 80) {
      const res = await http(server.baseUrl, 'POST', '/api/events/messages', {
        messages: Array.from({ length: 500 }, (_, i) => ({
          messageType: 'Bulk',
          userId: `u-${i % 9}`,
          content: { b: batches, i, padding },
        })),
      });
      expect(res.status).toBe(201);
      batches++;
    }
    // Then its mailbox overflowed instead of growing, and never held more than its bound
    expect(router.stats().overflows).toBeGreaterThan(overflowsBefore);
    expect(router.stats().peakMailbox).toBeLessThanOrEqual(50);
    const end = await head();
    // And once it reads again it receives every message, in order, once
    stream.resume();
    await stream.waitFor(() => stream.indices().at(-1) === end, 30_000, `index ${end}`);
    expect(stream.indices()).toEqual(Array.from({ length: end - from + 1 }, (_, i) => from + i));
    // And it is live again: a new message arrives on the same connection
    const after = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'AfterCatchUp',
      content: {},
    });
    await stream.waitFor(
      () => stream.indices().at(-1) === after.body.id,
      5000,
      'the live message after catch-up',
    );
  });

  it('ends open streams within seconds when the server shuts down', async () => {
    // Given a server with two open streams, one mid-history
    const server = await start();
    const a = await connect(server, '/api/events/stream?startIndex=1');
    const b = await connect(server, `/api/events/stream?startIndex=${(await head()) + 1}`);
    await b.waitFor(() => b.events.length > 0, 5000, 'connected');
    // When it shuts down
    const started = Date.now();
    await server.close();
    // Then it took seconds, not the seed's 25, and both streams have ended
    expect(Date.now() - started).toBeLessThan(3000);
    await a.waitFor(() => a.ended, 2000, 'the first stream to end');
    await b.waitFor(() => b.ended, 2000, 'the second stream to end');
    await waitFor(() => server.app.get(LiveRouter).stats().feeds === 0, 2000, 'no feeds');
  });
});
