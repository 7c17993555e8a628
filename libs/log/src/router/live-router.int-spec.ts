import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { take } from '@ordinal/test-support/feed-take';
import { LogModule } from '../log.module.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import type { StoredMessage } from '../message.js';
import { LiveRouter } from './live-router.service.js';
import type { LogFeed } from './log-feed.js';

/** A log in its own Nest context on the suite's database. */
async function startLog(url: string, livePollMs: number): Promise<INestApplicationContext> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url,
        entities: [],
        synchronize: false,
        extra: { max: 4 },
      }),
      LogModule.forRoot({ isGlobal: true, duplicateWindow: 0, livePollMs, startMarker: false }),
    ],
  })
  class TestLogModule {}
  const context = await NestFactory.createApplicationContext(TestLogModule, { logger: false });
  await context.init();
  return context;
}

/** Polls until `check` holds, failing after the deadline. */
async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const insertRaw = (db: TestDatabase, from: number, to: number, notify: boolean) =>
  db.query(
    `WITH ins AS (
       INSERT INTO messages (index, message_type, user_id, body, content_hash)
       SELECT g, 'Raw', 'user-' || g, jsonb_build_object('g', g), md5(g::text) FROM generate_series($1::bigint, $2::bigint) g
       RETURNING 1),
     head AS (UPDATE log_head SET position = $2 WHERE id = 1 RETURNING 1)
     SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM head) ${notify ? ", pg_notify('ordinal_log', $2::text)" : ''}`,
    [from, to],
  );

describe('LiveRouter (L5, R2, R3)', () => {
  let db: TestDatabase;
  let context: INestApplicationContext;
  let router: LiveRouter;
  let writer: LogWriter;
  let reader: LogReader;
  const opened: LogFeed[] = [];
  const openFeed = (options: Parameters<LiveRouter['open']>[0]) => {
    const feed = router.open(options);
    opened.push(feed);
    return feed;
  };
  const append = (n: number, type = 'Appended') =>
    writer.append({
      messages: Array.from({ length: n }, (_, i) => ({
        messageType: type,
        userId: `u-${i % 5}`,
        body: { i },
      })),
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    context = await startLog(db.url, 60_000);
    router = context.get(LiveRouter);
    writer = context.get(LogWriter);
    reader = context.get(LogReader);
  });
  afterEach(() => {
    for (const feed of opened.splice(0)) feed.close();
  });
  afterAll(async () => {
    await context?.close();
    await db?.drop();
  });

  it('delivers its own commits without reading the database', async () => {
    // Given a live feed at the head, and LISTEN established (its reconnection triggers a read)
    await waitFor(() => router.stats().listening, 5000, 'LISTEN');
    const feed = openFeed({ fromIndex: 1 });
    await feed.headAtOpen;
    await append(3);
    expect((await take(feed, 3)).map((m) => m.id)).toEqual([1, 2, 3]);
    // (the read that LISTEN's establishment asked for may still be running: let it finish)
    await waitFor(() => !router.stats().busy, 5000, 'the router to be idle');
    const readsBefore = router.stats().databaseReads;
    // When this process appends three more batches
    await append(2);
    await append(1);
    await append(4);
    // Then the feed gets them, and the router did not read them back
    const got = await take(feed, 7);
    expect(got.map((m) => m.id)).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(router.stats().databaseReads).toBe(readsBefore);
    expect(router.stats().directDeliveries).toBeGreaterThanOrEqual(3);
    feed.close();
  });

  it.each([
    [
      'its own maxCount, passed by the append itself',
      `INSERT INTO stream_states (stream_id, max_count) VALUES ('capped-1', 1)`,
      'capped-1',
    ],
    [
      'its category’s truncateBefore',
      `INSERT INTO category_rules (category, truncate_before) VALUES ('trunc', 2)`,
      'trunc-1',
    ],
  ])(
    'never hands out the body of a message hidden the moment it commits (%s): it comes as its tombstone',
    async (_, rule, streamId) => {
      // Given a live feed, and a stream whose retention hides its first version once it has two
      await waitFor(() => router.stats().listening, 5000, 'LISTEN');
      await db.query(rule);
      const feed = openFeed({ fromIndex: (await reader.safeHead()) + 1 });
      await feed.headAtOpen;
      // When this process appends two events to it in one append
      const result = await writer.append({
        stream: { streamId, expectedVersion: 'no_stream' },
        messages: [
          { messageType: 'Kept', body: { secret: 'first' } },
          { messageType: 'Kept', body: { secret: 'second' } },
        ],
      });
      expect(result.streamVersion).toBe(2);
      // Then the feed gets the first as a tombstone, without its body, and the second whole
      const [first, second] = await take(feed, 2);
      expect(first).toMatchObject({ streamVersion: 1, tombstone: 'truncated', body: null });
      expect(second).toMatchObject({ streamVersion: 2, body: { secret: 'second' } });
      expect(second.tombstone).toBeUndefined();
    },
  );

  it('drops its kept catch-up pages when another process deletes a stream: a read that starts after the delete gets tombstones', async () => {
    // Given three events of a stream, read by a feed from the start (the page is kept for feeds just behind)
    await waitFor(() => router.stats().listening, 5000, 'LISTEN');
    const from = (await reader.safeHead()) + 1;
    await writer.append({
      stream: { streamId: 'kept-1', expectedVersion: 'no_stream' },
      messages: [1, 2, 3].map((n) => ({ messageType: 'Kept', body: { n } })),
    });
    const first = openFeed({ fromIndex: from });
    expect((await take(first, 3)).map((m) => m.body)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const notices = router.stats().lifecycleNotices;
    // When another process deletes the stream (its transaction writes the stream's state)
    await db.query(
      `INSERT INTO stream_states (stream_id, state, deleted_through) VALUES ('kept-1', 'deleted', 3)`,
    );
    // Then this process is told, and a feed opened now reads the stream's events as tombstones
    await waitFor(() => router.stats().lifecycleNotices > notices, 5000, 'the lifecycle notice');
    const second = openFeed({ fromIndex: from });
    const got = await take(second, 3);
    expect(got.map((m) => [m.tombstone, m.body])).toEqual([
      ['deleted', null],
      ['deleted', null],
      ['deleted', null],
    ]);
  });

  it('wakes on NOTIFY from another process (the poll is a minute away)', async () => {
    // Given a feed from the head
    const head = await reader.safeHead();
    const feed = openFeed({ fromIndex: head + 1 });
    expect(await feed.headAtOpen).toBe(head);
    // When another writer commits rows and notifies
    await insertRaw(db, head + 1, head + 4, true);
    // Then they arrive, read once from the database
    const got = await take(feed, 4);
    expect(got.map((m) => m.id)).toEqual([head + 1, head + 2, head + 3, head + 4]);
    expect(got[0]).toMatchObject({
      messageType: 'Raw',
      userId: `user-${head + 1}`,
      body: { g: head + 1 },
    });
    feed.close();
  });

  it('finds rows written without NOTIFY through the poll', async () => {
    // Given a second log context polling every 100 ms, with a feed at the head
    const polling = await startLog(db.url, 100);
    try {
      const other = polling.get(LiveRouter);
      const head = await reader.safeHead();
      const feed = other.open({ fromIndex: head + 1 });
      await feed.headAtOpen;
      // When rows are committed silently (no NOTIFY)
      await insertRaw(db, head + 1, head + 2, false);
      // Then the poll delivers them
      const got = await take(feed, 2, 3000);
      expect(got.map((m) => m.id)).toEqual([head + 1, head + 2]);
      feed.close();
    } finally {
      await polling.close();
    }
  });

  it('bounds a slow feed: overflow detaches it, it catches up from the database without a miss or repeat', async () => {
    // Given a feed with a mailbox of 5 that nobody pulls yet
    const from = (await reader.safeHead()) + 1;
    const feed = openFeed({ fromIndex: from, mailboxLimit: 5 });
    await feed.headAtOpen;
    const overflows = router.stats().overflows;
    // When 200 messages are committed in batches
    for (let i = 0; i < 10; i++) await append(20, 'Burst');
    // Then the mailbox overflowed and was dropped, never holding more than its bound
    expect(router.stats().overflows).toBe(overflows + 1);
    expect(router.stats().feeds).toBe(0);
    // And pulling now yields all 200, in order, once each; the feed then rejoins live
    const got = await take(feed, 200);
    expect(got.map((m) => m.id)).toEqual(Array.from({ length: 200 }, (_, i) => from + i));
    await append(1, 'AfterRejoin');
    const [after] = await take(feed, 1);
    expect(after).toMatchObject({ id: from + 200, messageType: 'AfterRejoin' });
    expect(router.stats().feeds).toBe(1);
    feed.close();
    expect(router.stats().feeds).toBe(0);
  });

  it('filters by type and shard, and completes at toIndex even when the last ones are filtered out', async () => {
    // Given a mixed range
    const from = (await reader.safeHead()) + 1;
    await append(10, 'Keep');
    await append(5, 'Skip');
    // When a feed asks for one type in shard 1 of 2, up to the last Skip
    const feed = openFeed({
      fromIndex: from,
      toIndex: from + 14,
      types: ['Keep'],
      shard: { count: 2, index: 1 },
    });
    const got: StoredMessage[] = [];
    for await (const m of feed) got.push(m);
    // Then it ended by itself
    expect(feed.completed).toBe(true);
    expect(feed.position).toBe(from + 14);
    // And it delivered exactly the matching messages of the range, in order: every one that
    // matches arrived, and nothing else did
    const { shardOf } = await import('@ordinal/contract');
    const stored = await db.query<{ index: string; message_type: string; user_id: string | null }>(
      'SELECT index::text AS index, message_type, user_id FROM messages WHERE index BETWEEN $1 AND $2 ORDER BY index',
      [from, from + 14],
    );
    expect(stored).toHaveLength(15);
    const matching = stored
      .filter((r) => r.message_type === 'Keep' && shardOf(r.user_id, 2) === 1)
      .map((r) => Number(r.index));
    expect(matching.length).toBeGreaterThan(0);
    expect(matching.length).toBeLessThan(10);
    expect(got.map((m) => m.id)).toEqual(matching);
  });

  it('ends a pending iteration on close and on shutdown', async () => {
    // Given two feeds waiting for live messages in another context
    const other = await startLog(db.url, 60_000);
    const head = await reader.safeHead();
    const a = other.get(LiveRouter).open({ fromIndex: head + 1 });
    const b = other.get(LiveRouter).open({ fromIndex: head + 1 });
    await Promise.all([a.headAtOpen, b.headAtOpen]);
    const pendingA = a[Symbol.asyncIterator]().next();
    const pendingB = b[Symbol.asyncIterator]().next();
    // When one is closed and the context shuts down
    a.close();
    await other.close();
    // Then both iterations end
    await expect(pendingA).resolves.toEqual({ done: true, value: undefined });
    await expect(pendingB).resolves.toEqual({ done: true, value: undefined });
  });
});
