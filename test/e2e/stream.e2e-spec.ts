import { shardOf } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

describe('SSE pull streams (R1, R2, R4)', () => {
  let db: TestDatabase;
  let server: TestServer;
  const open: SseConnection[] = [];
  const connect = async (path: string, headers: Record<string, string> = DEV_AUTH) => {
    const connection = await SseConnection.open(server.baseUrl, path, headers);
    open.push(connection);
    return connection;
  };
  const publish = (messageType: string, content: unknown, userId?: string) =>
    http(server.baseUrl, 'PUT', '/api/events/message', { messageType, content, userId });
  const publishBatch = (messages: unknown[]) =>
    http(server.baseUrl, 'POST', '/api/events/messages', { messages });
  const head = async () =>
    Number(
      (await db.query<{ head: string }>('SELECT coalesce(max(index), 0) AS head FROM messages'))[0]
        .head,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_HEARTBEAT_MS: '200',
      ORDINAL_DUPLICATE_WINDOW: '0',
      ORDINAL_TOKENS: 'writer:write-only:write',
    });
  });
  afterEach(() => {
    for (const c of open.splice(0)) c.close();
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('sends connected, history, then live messages on the same connection, with heartbeats', async () => {
    // Given a log with the StartMarker and two orders
    await publish('OrderPlaced', { orderId: 'o-1' }, 'customer-1');
    await publish('OrderShipped', { orderId: 'o-1' }, 'customer-1');
    const before = await head();
    // When a stream opens from 1
    const stream = await connect('/api/events/stream?startIndex=1');
    expect(stream.status).toBe(200);
    expect(stream.response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.response.headers['cache-control']).toContain('no-cache');
    expect(stream.response.headers['x-accel-buffering']).toBe('no');
    await stream.waitFor(() => stream.indices().length === before, 5000, 'the history');
    // And a message is published afterwards
    const live = await publish('OrderPlaced', { orderId: 'o-2' }, 'customer-2');
    await stream.waitFor(() => stream.indices().includes(live.body.id), 5000, 'the live message');
    await stream.waitFor(
      () => stream.events.some((e) => e.event === 'heartbeat'),
      5000,
      'a heartbeat',
    );
    // Then connected comes first, with where we started and where the log ended
    expect(stream.events[0]).toEqual({
      event: 'connected',
      data: { startIndex: 1, headIndex: before },
    });
    // And history then live arrive in order, each with its index as the SSE id
    expect(stream.indices()).toEqual(Array.from({ length: before + 1 }, (_, i) => i + 1));
    const message = stream.events.find(
      (e) => e.event === 'message' && e.data.message.id === live.body.id,
    )!;
    expect(message.id).toBe(String(live.body.id));
    expect(message.data.message).toEqual(live.body);
    const heartbeat = stream.events.find((e) => e.event === 'heartbeat')!;
    expect(heartbeat.data.headIndex).toBeGreaterThanOrEqual(before);
    // And /metrics counts the open stream and the router's fan-out
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^ordinal_sse_streams_open [1-9]/m);
    expect(metrics).toMatch(/^ordinal_router_feeds [1-9]/m);
    expect(metrics).toMatch(new RegExp(`^ordinal_router_delivered_up_to ${live.body.id}$`, 'm'));
  });

  it('filters by type and ends with stream-ended at endIndex', async () => {
    // Given orders placed, shipped and cancelled
    const res = await publishBatch([
      { messageType: 'OrderPlaced', content: { n: 1 } },
      { messageType: 'OrderCancelled', content: { n: 2 } },
      { messageType: 'OrderShipped', content: { n: 3 } },
      { messageType: 'OrderPlaced', content: { n: 4 } },
    ]);
    const ids: number[] = res.body.messages.map((m: { id: number }) => m.id);
    // When a stream asks for two types up to the third of the batch
    const stream = await connect(
      `/api/events/stream?startIndex=${ids[0]}&endIndex=${ids[2]}&types=OrderPlaced,OrderCancelled`,
    );
    await stream.waitFor(() => stream.ended, 5000, 'the end of the stream');
    // Then only the matching messages up to endIndex came, then stream-ended, then the end
    expect(stream.indices()).toEqual([ids[0], ids[1]]);
    expect(stream.events.at(-1)).toEqual({
      event: 'stream-ended',
      id: String(ids[2]),
      data: { endIndex: ids[2], lastIndex: ids[1] },
    });
  });

  it('ends at an endIndex in the future once the log gets there', async () => {
    // Given a stream whose endIndex is two messages ahead of the log
    const target = (await head()) + 2;
    const stream = await connect(`/api/events/stream?startIndex=${target - 1}&endIndex=${target}`);
    await stream.waitFor(() => stream.events.length === 1, 5000, 'connected');
    expect(stream.ended).toBe(false);
    // When three messages are published
    for (let i = 0; i < 3; i++) await publish('Tick', { i });
    // Then it receives exactly the two and ends
    await stream.waitFor(() => stream.ended, 5000, 'the end of the stream');
    expect(stream.indices()).toEqual([target - 1, target]);
    expect(stream.events.at(-1)?.event).toBe('stream-ended');
  });

  it('resumes after Last-Event-ID, which wins over startIndex', async () => {
    // Given a log of at least six messages
    await publishBatch(
      Array.from({ length: 6 }, (_, i) => ({ messageType: 'Resume', content: { i } })),
    );
    const end = await head();
    // When a client reconnects with Last-Event-ID 4 (and its original startIndex 1)
    const stream = await connect(`/api/events/stream?startIndex=1&endIndex=${end}`, {
      ...DEV_AUTH,
      'last-event-id': '4',
    });
    await stream.waitFor(() => stream.ended, 5000, 'the end of the stream');
    // Then it gets everything after 4
    expect(stream.events[0].data.startIndex).toBe(5);
    expect(stream.indices()).toEqual(Array.from({ length: end - 4 }, (_, i) => i + 5));
  });

  it('keeps a stream resumed after the last exact index open, waiting like any stream without endIndex', async () => {
    // When a client resumes with Last-Event-ID 2^53 − 1 and no endIndex
    const stream = await connect('/api/events/stream', {
      ...DEV_AUTH,
      'last-event-id': String(Number.MAX_SAFE_INTEGER),
    });
    expect(stream.status).toBe(200);
    // Then the stream stays open with heartbeats (ORDINAL_HEARTBEAT_MS 200), and never says it ended
    await stream.waitFor(
      () => stream.events.filter((e) => e.event === 'heartbeat').length >= 2,
      5000,
      'two heartbeats',
    );
    expect(stream.ended).toBe(false);
    expect(stream.events.map((e) => e.event)).not.toContain('stream-ended');
  });

  describe('bad parameters get 400 JSON before the stream opens', () => {
    it.each([
      ['negative startIndex', 'startIndex=-1', /startIndex/],
      ['non-numeric startIndex', 'startIndex=abc', /startIndex/],
      ['fractional endIndex', 'endIndex=2.5', /endIndex/],
      ['endIndex below startIndex', 'startIndex=10&endIndex=9', /endIndex/],
      ['shardIndex equal to shardCount', 'shardCount=3&shardIndex=3', /shardIndex/],
      ['shardCount zero', 'shardCount=0&shardIndex=0', /shardCount/],
      ['shardIndex without shardCount', 'shardIndex=1', /shardCount/],
      ['a type with a space', 'types=Order%20Placed', /types/],
      ['a type with a quote', "types=A,B'", /types/],
    ])('%s', async (_name, query, message) => {
      const stream = await connect(`/api/events/stream?${query}`);
      expect(stream.status).toBe(400);
      expect(stream.response.headers['content-type']).toContain('application/json');
      expect(await stream.json()).toMatchObject({
        statusCode: 400,
        message: expect.stringMatching(message),
      });
    });

    it('a non-numeric Last-Event-ID', async () => {
      const stream = await connect('/api/events/stream', { ...DEV_AUTH, 'last-event-id': 'x1' });
      expect(stream.status).toBe(400);
      expect((await stream.json()).message).toMatch(/Last-Event-ID/);
    });
  });

  it('needs a token with the read scope', async () => {
    const none = await connect('/api/events/stream', {});
    expect(none.status).toBe(401);
    const writer = await connect('/api/events/stream', { authorization: 'Bearer write-only' });
    expect(writer.status).toBe(403);
    expect((await writer.json()).message).toMatch(/read/);
  });

  it('has no seam: a stream opened while 4 producers publish gets exactly 1..N in order', async () => {
    // Given 4 producers publishing single messages and small batches continuously
    const total = 1200;
    let sent = await head();
    const target = sent + total;
    let halfway!: () => void;
    const reachedHalfway = new Promise<void>((resolve) => (halfway = resolve));
    const producer = async (p: number) => {
      for (let k = 0; sent < target; k++) {
        if (sent >= target - total / 2) halfway();
        if (k % 3 === 2) {
          const size = 1 + (k % 5);
          sent += size;
          await publishBatch(
            Array.from({ length: size }, (_, i) => ({
              messageType: `Seam${p}`,
              content: { p, k, i },
            })),
          );
        } else {
          sent += 1;
          await publish(`Seam${p}`, { p, k });
        }
      }
    };
    const producing = Promise.all([0, 1, 2, 3].map(producer));
    // When streams open from 1 at different moments while they publish
    const early = await connect('/api/events/stream?startIndex=1');
    await reachedHalfway;
    const late = await connect('/api/events/stream?startIndex=1');
    await producing;
    // Then, once everything is committed, each has received exactly the table, in order
    const rows = await db.query<{ index: string; message_type: string }>(
      'SELECT index, message_type FROM messages ORDER BY index',
    );
    const expected = rows.map((r) => Number(r.index));
    expect(expected).toEqual(Array.from({ length: expected.length }, (_, i) => i + 1));
    for (const stream of [early, late]) {
      await stream.waitFor(
        () => stream.indices().length >= expected.length,
        15_000,
        `all ${expected.length} messages`,
      );
      expect(stream.indices()).toEqual(expected);
      const types = stream.events
        .filter((e) => e.event === 'message')
        .map((e) => e.data.message.messageType);
      expect(types).toEqual(rows.map((r) => r.message_type));
    }
  });

  it('splits the log among shards: union is everything, disjoint, one user in one shard (L9)', async () => {
    // Given 50 users' messages and some without a user
    await publishBatch(
      Array.from({ length: 300 }, (_, i) => ({
        messageType: 'Sharded',
        userId: i % 7 === 0 ? undefined : `customer-${i % 50}`,
        content: { i },
      })),
    );
    const end = await head();
    // When three readers each stream their shard to the head
    const readers = await Promise.all(
      [0, 1, 2].map((i) =>
        connect(`/api/events/stream?startIndex=1&endIndex=${end}&shardCount=3&shardIndex=${i}`),
      ),
    );
    await Promise.all(readers.map((r) => r.waitFor(() => r.ended, 10_000, 'the end of the shard')));
    const shards = readers.map((r) =>
      r.events.filter((e) => e.event === 'message').map((e) => e.data.message),
    );
    // Then together they saw every message exactly once
    const all = shards
      .flat()
      .map((m) => m.id)
      .sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: end }, (_, i) => i + 1));
    // And each user (no user counting as "") lives in exactly one shard, the one shardOf names
    const owner = new Map<string, number>();
    shards.forEach((messages, shard) => {
      for (const m of messages) {
        const user = m.userId ?? '';
        expect(owner.get(user) ?? shard).toBe(shard);
        owner.set(user, shard);
        expect(shardOf(m.userId, 3)).toBe(shard);
      }
    });
    expect([...owner.keys()].filter((u) => u.startsWith('customer-'))).toHaveLength(50);
    expect(shards.every((s) => s.length > 0)).toBe(true);
  });

  it('serves JSON pages by type and shard with the next index (R4)', async () => {
    // Given the log so far
    const end = await head();
    // When shard pages are read to the end
    const seen: number[] = [];
    for (let shard = 0; shard < 3; shard++) {
      let from = 1;
      for (;;) {
        const page = await http(
          server.baseUrl,
          'GET',
          `/api/events?fromIndex=${from}&limit=500&shardCount=3&shardIndex=${shard}`,
        );
        expect(page.status).toBe(200);
        for (const m of page.body.messages) {
          expect(shardOf(m.userId, 3)).toBe(shard);
          seen.push(m.id);
        }
        if (page.body.nextIndex > end) break;
        expect(page.body.nextIndex).toBeGreaterThan(from);
        from = page.body.nextIndex;
      }
    }
    // Then the shards' pages cover the log exactly once
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: end }, (_, i) => i + 1));
    const bad = await http(server.baseUrl, 'GET', '/api/events?shardCount=2&shardIndex=2');
    expect(bad.status).toBe(400);
  });
});
