import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { rawHttp } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

const TOKENS = 'reader:read-secret:read';
const reader = { authorization: 'Bearer read-secret' };

/**
 * Issue 23: a stream ticket is single-use across every server process on one database and
 * across a restart, not only inside the process that took it first (an EventSource that
 * reconnects with its used ticket gets a 401 everywhere and stops).
 */
describe('stream tickets are single-use across processes and restarts', () => {
  let db: TestDatabase;
  const running = new Set<ServerProcess>();

  const start = async (): Promise<{ server: ServerProcess; baseUrl: string }> => {
    const server = spawnServer({ DATABASE_URL: db.url, PORT: '0', ORDINAL_TOKENS: TOKENS });
    running.add(server);
    return { server, baseUrl: `http://127.0.0.1:${await listeningPort(server, 60_000)}` };
  };
  const stop = async (server: ServerProcess) => {
    await server.stop();
    running.delete(server);
  };

  const ticketFrom = async (baseUrl: string): Promise<string> => {
    const res = await rawHttp(baseUrl, 'POST', '/api/events/stream-ticket', undefined, reader);
    expect(res.status).toBe(201);
    return (res.body as { ticket: string }).ticket;
  };

  /** Opens the stream with the ticket as an EventSource does (no header) and waits for `connected`. */
  const streamWith = async (baseUrl: string, ticket: string) => {
    const stream = await SseConnection.open(
      baseUrl,
      `/api/events/stream?startIndex=1&ticket=${encodeURIComponent(ticket)}`,
      {},
    );
    expect(stream.status).toBe(200);
    await stream.waitFor(
      () => stream.events.some((e) => e.event === 'connected'),
      10_000,
      'connected',
    );
    stream.close();
  };

  /** The answer to a reconnection with `ticket`: a stream that opens is closed at once (its body never ends). */
  const reconnect = async (baseUrl: string, ticket: string) => {
    const stream = await SseConnection.open(
      baseUrl,
      `/api/events/stream?startIndex=1&ticket=${encodeURIComponent(ticket)}`,
      {},
    );
    stream.close();
    if (stream.status === 200) return { status: 200, body: 'a stream' as unknown };
    const res = await rawHttp(
      baseUrl,
      'GET',
      `/api/events/stream?startIndex=1&ticket=${encodeURIComponent(ticket)}`,
      undefined,
      {},
      { fresh: true },
    );
    return { status: stream.status, body: res.body as unknown };
  };

  const expectRefused = async (baseUrl: string, ticket: string) => {
    expect(await reconnect(baseUrl, ticket)).toMatchObject({
      status: 401,
      body: { statusCode: 401, code: 'invalid_stream_ticket' },
    });
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const server of running) await server.stop();
    await db?.drop();
  });

  it('refuses on a second server process a ticket the first one accepted', async () => {
    // Given two server processes on one database
    const [a, b] = await Promise.all([start(), start()]);
    // And a ticket issued by A and used on A
    const ticket = await ticketFrom(a.baseUrl);
    await streamWith(a.baseUrl, ticket);
    // When an EventSource reconnects with it to B
    // Then B refuses it as used
    await expectRefused(b.baseUrl, ticket);
    // And a ticket issued by A but never used opens B's stream once
    const fresh = await ticketFrom(a.baseUrl);
    await streamWith(b.baseUrl, fresh);
    await expectRefused(a.baseUrl, fresh);
    await Promise.all([stop(a.server), stop(b.server)]);
  }, 120_000);

  it('refuses a used ticket after the server restarts', async () => {
    // Given a ticket used on a server
    const first = await start();
    const ticket = await ticketFrom(first.baseUrl);
    await streamWith(first.baseUrl, ticket);
    // When the server restarts (within the ticket's 30 s life)
    await stop(first.server);
    const second = await start();
    // Then the restarted server refuses it
    await expectRefused(second.baseUrl, ticket);
    await stop(second.server);
  }, 120_000);
});
