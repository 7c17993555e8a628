import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  OrdinalClient,
  callbackBookmark,
  fileBookmark,
  shardOf,
  isTombstone,
  type OrdinalMessage,
  type PullConsumer,
} from '@ordinal/client';
import { createApp } from '../../apps/eventstore/src/create-app.js';
import { loadConfig } from '../../apps/eventstore/src/config/ordinal-config.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { waitFor } from '../support/test-server.js';
import { HeldTransaction } from '../support/held-transaction.js';

/** The server on a given port (0: any), so a test can restart it on the same address. */
async function listen(
  databaseUrl: string,
  port: number,
): Promise<{ app: NestFastifyApplication; port: number }> {
  const config = loadConfig({
    ORDINAL_ENV: 'development',
    DATABASE_URL: databaseUrl,
    ORDINAL_DUPLICATE_WINDOW: '0',
    ORDINAL_HEARTBEAT_MS: '300',
  });
  const app = await createApp(config, { logger: false, openApiUi: false });
  await app.listen(port, '127.0.0.1');
  return { app, port: (app.getHttpServer().address() as { port: number }).port };
}

describe('the TypeScript client and its pull consumer (R6)', () => {
  let db: TestDatabase;
  let server: { app: NestFastifyApplication; port: number };
  let client: OrdinalClient;
  let dir: string;
  const consumers: PullConsumer[] = [];
  const consume = (options: Parameters<OrdinalClient['consume']>[0], on = client) => {
    const consumer = on.consume(options);
    consumers.push(consumer);
    return consumer;
  };
  /** A producer that retries once: after a restart, the first request may meet a stale keep-alive socket. */
  const publishBatch = async (messages: ReturnType<typeof orders>) => {
    try {
      return await client.publishBatch(messages);
    } catch {
      return await client.publishBatch(messages);
    }
  };
  const orders = (n: number, type = 'OrderPlaced') =>
    Array.from({ length: n }, (_, i) => ({
      messageType: type,
      userId: `customer-${i % 10}`,
      content: { i, at: Math.random() },
    }));

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await listen(db.url, 0);
    client = new OrdinalClient({
      baseUrl: `http://127.0.0.1:${server.port}`,
      token: 'dev-ordinal-token',
    });
    dir = await mkdtemp(join(tmpdir(), 'ordinal-client-'));
  });
  afterEach(async () => {
    for (const consumer of consumers.splice(0)) await consumer.stop();
  });
  afterAll(async () => {
    await server?.app.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('publishes, pages, gets and reads the head', async () => {
    // When a message and a batch are published
    const one = await client.publish({
      messageType: 'OrderPlaced',
      userId: 'customer-1',
      content: { total: 10 },
    });
    const batch = await client.publishBatch(orders(3, 'OrderShipped'));
    const keyed = await client.publish({
      messageType: 'Paid',
      content: { n: 1 },
      idempotencyKey: 'k-1',
    });
    const again = await client.publish({
      messageType: 'Paid',
      content: { n: 1 },
      idempotencyKey: 'k-1',
    });
    // Then each comes back stored, with its index
    expect(one).toMatchObject({
      status: 'created',
      message: { id: 2, messageType: 'OrderPlaced', userId: 'customer-1', body: { total: 10 } },
    });
    expect(batch.map((r) => r.status)).toEqual(['created', 'created', 'created']);
    expect(again).toEqual({
      status: 'repeat',
      message: keyed.status === 'duplicate' ? undefined : keyed.message,
    });
    // And the reads agree with it
    expect(await client.head()).toBe(6);
    const page = await client.page({ fromIndex: 2, limit: 2, types: ['OrderShipped'] });
    expect(page.messages.map((m) => m.id)).toEqual([3, 4]);
    expect(page.nextIndex).toBe(5);
    expect(await client.get(2)).toMatchObject({ id: 2, messageType: 'OrderPlaced' });
    expect(await client.get(999)).toBeNull();
  });

  it('consumes with types, a shard and endIndex into a file bookmark, then stops by itself', async () => {
    // Given a log with two types across users
    await client.publishBatch([...orders(20), ...orders(10, 'OrderCancelled')]);
    const end = await client.head();
    const path = join(dir, 'shard0.bookmark');
    // When a consumer reads OrderPlaced in shard 0 of 2 up to the head
    const handled: OrdinalMessage[] = [];
    const consumer = consume({
      bookmark: fileBookmark(path),
      types: ['OrderPlaced'],
      shard: { count: 2, index: 0 },
      endIndex: end,
      handler: (message) => void handled.push(message),
    });
    await consumer.done;
    // Then it saw exactly the matching messages and its bookmark is the end index
    const expected = (
      await client.page({ fromIndex: 1, limit: 1000, types: ['OrderPlaced'] })
    ).messages.filter((m) => !isTombstone(m) && shardOf(m.userId, 2) === 0);
    expect(handled.map((m) => m.id)).toEqual(expected.map((m) => m.id));
    expect(expected.length).toBeGreaterThan(0);
    expect((await readFile(path, 'utf8')).trim()).toBe(String(end));
    // And a second run with the same bookmark has nothing left to do
    const rerun: number[] = [];
    await consume({
      bookmark: fileBookmark(path),
      endIndex: end,
      handler: (m) => void rerun.push(m.id),
    }).done;
    expect(rerun).toEqual([]);
  });

  it('tells the handler when it has caught up with the head seen at connect', async () => {
    // Given a consumer from the start of the log
    const seen: { index: number; caughtUp: boolean }[] = [];
    let connectedHead = -1;
    const consumer = consume({
      bookmark: callbackBookmark({ load: () => 0, save: () => undefined }),
      handler: (_m, context) =>
        void seen.push({ index: context.index, caughtUp: context.caughtUp }),
      onConnected: ({ headIndex }) => (connectedHead = headIndex),
    });
    await waitFor(() => connectedHead >= 0 && seen.length === connectedHead, 5000, 'the history');
    // When a message is published after it connected
    const live = await client.publish({ messageType: 'Live', content: {} });
    const liveIndex = live.status === 'duplicate' ? -1 : live.message.id;
    await waitFor(() => seen.some((s) => s.index === liveIndex), 5000, 'the live message');
    await consumer.stop();
    // Then history came with caughtUp false and the live message with caughtUp true
    expect(seen.filter((s) => s.index <= connectedHead).every((s) => !s.caughtUp)).toBe(true);
    expect(seen.find((s) => s.index === liveIndex)?.caughtUp).toBe(true);
  });

  it('survives a server restart mid-stream and a dropped connection; the bookmark never passes an unprocessed index', async () => {
    // Given 200 messages and a consumer whose handler blocks at one of them
    await client.publishBatch(orders(200, 'Restart'));
    const blockAt = (await client.head()) - 100;
    const processed = new Set<number>();
    const violations: string[] = [];
    let bookmark = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const errors: unknown[] = [];
    const consumer = consume({
      bookmark: callbackBookmark({
        load: () => bookmark,
        save: (index) => {
          for (let i = bookmark + 1; i <= index; i++)
            if (!processed.has(i)) violations.push(`bookmark ${index} passes unprocessed ${i}`);
          bookmark = index;
        },
      }),
      backoff: { initialMs: 50, maxMs: 400 },
      onError: (error) => void errors.push(error),
      handler: async (message) => {
        if (message.id === blockAt) await gate;
        processed.add(message.id);
      },
    });
    await waitFor(
      () => processed.size === blockAt - 1,
      10_000,
      'the consumer to reach the blocking message',
    );
    // When the server restarts on the same port while the handler is busy, and more arrives meanwhile
    await server.app.close();
    server = await listen(db.url, server.port);
    await publishBatch(orders(100, 'AfterRestart'));
    release();
    let head = await client.head();
    await waitFor(() => bookmark === head, 15_000, `the bookmark to reach ${head}`);
    // And the connection is dropped under it, and more arrives
    server.app.getHttpServer().closeAllConnections();
    await publishBatch(orders(50, 'AfterDrop'));
    head = await client.head();
    await waitFor(() => bookmark === head, 15_000, `the bookmark to reach ${head}`);
    await consumer.stop();
    // Then every index was handled at least once, the bookmark never ran ahead, and it reconnected twice
    for (let i = 1; i <= head; i++) expect(processed.has(i)).toBe(true);
    expect(violations).toEqual([]);
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });

  it('gives up on a request the server refuses', async () => {
    const bad = new OrdinalClient({ baseUrl: `http://127.0.0.1:${server.port}`, token: 'wrong' });
    const consumer = consume(
      {
        bookmark: callbackBookmark({ load: () => 0, save: () => undefined }),
        handler: () => undefined,
      },
      bad,
    );
    await expect(consumer.done).rejects.toMatchObject({ status: 401 });
  });
});

describe('the pull consumer and a late arrival (concurrent mode)', () => {
  let db: TestDatabase;
  let app: NestFastifyApplication;
  let client: OrdinalClient;
  let consumer: PullConsumer | null = null;
  let writer: HeldTransaction | null = null;

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = loadConfig({
      ORDINAL_ENV: 'development',
      DATABASE_URL: db.url,
      ORDINAL_ORDERING: 'concurrent',
      ORDINAL_GAP_TIMEOUT_MS: '1000',
    });
    app = await createApp(config, { logger: false, openApiUi: false });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    client = new OrdinalClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'dev-ordinal-token' });
  });
  afterAll(async () => {
    await consumer?.stop();
    await writer?.rollback().catch(() => undefined);
    await app?.close();
    await db?.drop();
  });

  it('calls the handler with context.late = true and leaves the bookmark where it is', async () => {
    // Given a consumer from the start, recording what it handles and every bookmark save
    const handled: { index: number; late: boolean }[] = [];
    const saves: number[] = [];
    consumer = client.consume({
      bookmark: callbackBookmark({ load: () => 0, save: (index) => void saves.push(index) }),
      handler: (_m, context) => void handled.push({ index: context.index, late: context.late }),
    });
    // And a writer that drew a position and holds it past the gap timeout
    writer = await HeldTransaction.begin(db.url);
    const held = await writer.drawPosition('late-1', 'Held', { n: 1 });
    // And a message above it, which the consumer handles once the hole is given up (so it passed the held position)
    const above = await client.publish({ messageType: 'Above', content: { n: 2 } });
    const aboveIndex = above.status === 'duplicate' ? -1 : above.message.id;
    expect(aboveIndex).toBeGreaterThan(held);
    await waitFor(() => saves.includes(aboveIndex), 10_000, `the bookmark at ${aboveIndex}`);

    // When the held writer commits
    await writer.commit();
    await waitFor(() => handled.some((h) => h.index === held), 10_000, 'the late arrival');

    // Then the handler got it once, marked late, after the message above it
    expect(handled.filter((h) => h.index === held)).toEqual([{ index: held, late: true }]);
    expect(handled.findIndex((h) => h.index === held)).toBeGreaterThan(
      handled.findIndex((h) => h.index === aboveIndex),
    );
    // And the bookmark never moved to it: it stays at the message above until the next one
    expect(saves).not.toContain(held);
    expect(saves.at(-1)).toBe(aboveIndex);
    const next = await client.publish({ messageType: 'Next', content: { n: 3 } });
    const nextIndex = next.status === 'duplicate' ? -1 : next.message.id;
    await waitFor(() => saves.includes(nextIndex), 10_000, `the bookmark at ${nextIndex}`);
    expect(saves.filter((s, k) => k > 0 && s <= saves[k - 1])).toEqual([]);
  });
});
