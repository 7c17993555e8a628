import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { take } from '@ordinal/test-support/feed-take';
import { LogModule } from '../log.module.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import { RenderedMessage, renderedJson } from '../row-mapper.js';
import { toOrdinalMessage } from '../ordinal-message.js';
import type { StoredMessage } from '../message.js';
import { LiveRouter } from './live-router.service.js';
import type { LogFeed } from './log-feed.js';

/** The message as the HTTP API shows it (apps/eventstore toMessageResponse), written out here independently. */
function apiView(m: StoredMessage): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: m.id,
    messageType: m.messageType,
    userId: m.userId,
    body: m.body,
    metadata: m.metadata,
    contentHash: m.contentHash,
    createdAt: m.createdAt,
  };
  if (m.streamId !== null)
    Object.assign(view, { streamId: m.streamId, streamVersion: m.streamVersion });
  if (m.schemaVersion !== 1) view.schemaVersion = m.schemaVersion;
  if (m.idempotencyKey !== null) view.idempotencyKey = m.idempotencyKey;
  if (m.correlationId !== null) view.correlationId = m.correlationId;
  if (m.causationId !== null) view.causationId = m.causationId;
  if (m.traceparent !== null) view.traceparent = m.traceparent;
  return view;
}

/** Polls until `check` holds, failing after the deadline. */
async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('The read path (issue 15): rendered rows, shared catch-up reads, suspended feeds', () => {
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

  beforeAll(async () => {
    db = await createTestDatabase();
    @Module({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: db.url,
          entities: [],
          synchronize: false,
          extra: { max: 4 },
        }),
        LogModule.forRoot({
          isGlobal: true,
          duplicateWindow: 0,
          livePollMs: 60_000,
          startMarker: false,
          replayBatchSize: 50,
        }),
      ],
    })
    class TestLogModule {}
    context = await NestFactory.createApplicationContext(TestLogModule, { logger: false });
    await context.init();
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

  it('renders each row in PostgreSQL as exactly the API view of the message, field order included', async () => {
    // Given messages with every optional field, odd text and numbers, and none
    const from = (await reader.safeHead()) + 1;
    await writer.append({
      messages: [
        { messageType: 'Plain', userId: null, body: { a: 1 } },
        {
          messageType: 'Odd"Type',
          userId: 'ü\n"\\\u0001😀',
          body: [1.5, -0, 1e-7, 'x\u2028y', { '': null, b: [true, false] }],
          metadata: { trace: 't"1' },
          idempotencyKey: 'key-"1"',
          schemaVersion: 3,
        },
      ],
    });
    await writer.append({
      messages: [{ messageType: 'Opened', userId: 'u', body: { n: 12345678901234 } }],
      stream: { streamId: 'order-1', expectedVersion: 'no_stream' },
      skipDuplicateWindow: true,
    });
    const head = await reader.safeHead();
    // When the same range is read plainly and rendered
    const plain = await reader.readUpTo(from - 1, 100, {}, head);
    const rendered = await reader.readUpTo(from - 1, 100, {}, head, true);
    // Then both cover the same range, and each rendered row is the API view: same keys in the same order, same values
    expect(rendered.to).toBe(plain.to);
    expect(rendered.messages.map((m) => m.id)).toEqual(plain.messages.map((m) => m.id));
    expect(plain.messages).toHaveLength(3);
    rendered.messages.forEach((m, i) => {
      expect(m).toBeInstanceOf(RenderedMessage);
      const json = renderedJson(m)!;
      const parsed = JSON.parse(json) as Record<string, unknown>;
      const expected = apiView(plain.messages[i]);
      expect(Object.keys(parsed)).toEqual(Object.keys(expected));
      expect(parsed).toEqual(expected);
      // and the lazily parsed fields agree with the plain read
      expect(apiView(m)).toEqual(expected);
      // and the server's own wire shape of the plain read is the same JSON (bodies re-serialised alike)
      expect(JSON.stringify(parsed)).toBe(JSON.stringify(toOrdinalMessage(plain.messages[i])));
    });
    expect(renderedJson(plain.messages[0])).toBeUndefined();
  });

  it('lets feeds replaying the same range share page reads, each still getting every message once, in order', async () => {
    // Given 500 messages (10 pages of 50)
    const from = (await reader.safeHead()) + 1;
    for (let i = 0; i < 5; i++)
      await writer.append({
        messages: Array.from({ length: 100 }, (_, j) => ({
          messageType: 'Shared',
          userId: `u-${j}`,
          body: { i, j },
        })),
      });
    const to = from + 499;
    const sharedBefore = router.stats().sharedReads;
    // When ten rendered feeds replay it at once
    const feeds = Array.from({ length: 10 }, () =>
      openFeed({ fromIndex: from, toIndex: to, rendered: true }),
    );
    const results = await Promise.all(
      feeds.map(async (feed) => {
        const got: StoredMessage[] = [];
        for await (const m of feed) got.push(m);
        return got;
      }),
    );
    // Then every feed has all 500 in order, and most pages came from another feed's read
    for (const got of results)
      expect(got.map((m) => m.id)).toEqual(Array.from({ length: 500 }, (_, i) => from + i));
    expect(router.stats().sharedReads - sharedBefore).toBeGreaterThanOrEqual(9 * 10 * 0.5);
    // And the kept pages go by themselves once nobody reads (an idle server holds none)
    expect(router.stats().sharedPagesKept).toBeGreaterThan(0);
    await waitFor(
      () => router.stats().sharedPagesKept === 0,
      10_000,
      'the kept pages to be dropped',
    );
  });

  it('cuts a shared read to a feed’s own bound: a feed never passes its toIndex or safe head', async () => {
    // Given a range, and a feed reading it whole while another reads only its first part
    const from = (await reader.safeHead()) + 1;
    await writer.append({
      messages: Array.from({ length: 30 }, (_, j) => ({
        messageType: 'Cut',
        userId: 'u',
        body: { j },
      })),
    });
    const whole = openFeed({ fromIndex: from, toIndex: from + 29, rendered: true });
    const part = openFeed({ fromIndex: from, toIndex: from + 9, rendered: true });
    const [a, b] = await Promise.all([
      take(whole, 30),
      (async () => {
        const got: StoredMessage[] = [];
        for await (const m of part) got.push(m);
        return got;
      })(),
    ]);
    expect(a.map((m) => m.id)).toEqual(Array.from({ length: 30 }, (_, i) => from + i));
    expect(b.map((m) => m.id)).toEqual(Array.from({ length: 10 }, (_, i) => from + i));
    expect(part.position).toBe(from + 9);
  });

  it('a suspended feed holds no live messages, then catches up from the database without a miss or repeat', async () => {
    // Given a live feed at the head that has taken one message
    const from = (await reader.safeHead()) + 1;
    const feed = openFeed({ fromIndex: from, rendered: true });
    await feed.headAtOpen;
    await writer.append({ messages: [{ messageType: 'Before', userId: 'u', body: { k: 0 } }] });
    expect((await take(feed, 1)).map((m) => m.id)).toEqual([from]);
    const feedsBefore = router.stats().feeds;
    // When its consumer suspends it (its socket is full) and 300 messages are committed
    feed.suspend();
    expect(router.stats().feeds).toBe(feedsBefore - 1);
    for (let i = 0; i < 3; i++)
      await writer.append({
        messages: Array.from({ length: 100 }, (_, j) => ({
          messageType: 'While',
          userId: 'u',
          body: { i, j },
        })),
      });
    // Then nothing was queued for it
    expect(router.stats().queued).toBe(0);
    // And pulling again yields all 300 in order, once each, and it rejoins live
    const got = await take(feed, 300);
    expect(got.map((m) => m.id)).toEqual(Array.from({ length: 300 }, (_, i) => from + 1 + i));
    await writer.append({
      messages: [{ messageType: 'AfterRejoin', userId: 'u', body: { k: 1 } }],
    });
    expect((await take(feed, 1))[0]).toMatchObject({ id: from + 301, messageType: 'AfterRejoin' });
    expect(router.stats().feeds).toBe(feedsBefore);
  });
});
