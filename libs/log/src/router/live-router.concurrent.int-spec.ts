import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { take as takeWithin } from '@ordinal/test-support/feed-take';
import type { LogModuleOptions } from '../log-options.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import { LiveRouter } from './live-router.service.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';
import type { LogFeed } from './log-feed.js';

/** A log in concurrent mode in its own Nest context on the suite's database. */
const startLog = (url: string, options: LogModuleOptions = {}) =>
  startLogContext(url, { ordering: 'concurrent', ...options });

/** A writer like Ordinal's concurrent flush: xid first, positions drawn inside the INSERT, then held open. */
async function heldWriter(url: string): Promise<{
  position: number;
  commit(): Promise<unknown>;
  rollback(): Promise<unknown>;
  end(): Promise<void>;
}> {
  const client = new pg.Client({ connectionString: url, application_name: 'held-writer' });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT pg_current_xact_id()');
  const { rows } = await client.query<{ index: number }>(
    `INSERT INTO messages (index, message_type, user_id, body, content_hash)
     VALUES (nextval('messages_index_seq'), 'Held', 'u-held', '{"held":true}'::jsonb, 'h') RETURNING index::int AS index`,
  );
  return {
    position: rows[0].index,
    commit: () => client.query('COMMIT'),
    rollback: () => client.query('ROLLBACK'),
    end: () => client.end(),
  };
}

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

/** Pulls `count` messages (a longer deadline: held writers and the gap timeout take their time). */
const take = (feed: LogFeed, count: number) => takeWithin(feed, count, 8000);

describe('LiveRouter in concurrent mode: no position ahead of what a joining reader is given', () => {
  let db: TestDatabase;
  const contexts: INestApplicationContext[] = [];
  const held: Awaited<ReturnType<typeof heldWriter>>[] = [];
  const feeds: LogFeed[] = [];

  const start = async (options?: LogModuleOptions) => {
    const context = await startLog(db.url, options);
    contexts.push(context);
    return {
      router: context.get(LiveRouter),
      writer: context.get(LogWriter),
      reader: context.get(LogReader),
      context,
    };
  };
  const hold = async () => {
    const w = await heldWriter(db.url);
    held.push(w);
    return w;
  };
  const open = (router: LiveRouter, fromIndex: number) => {
    const feed = router.open({ fromIndex });
    feeds.push(feed);
    return feed;
  };

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const feed of feeds.splice(0)) feed.close();
    await Promise.all(
      held.splice(0).map((w) =>
        w
          .rollback()
          .catch(() => undefined)
          .then(() => w.end()),
      ),
    );
    for (const context of contexts.splice(0)) await context.close();
    await db.drop();
  });

  it('with no feed open, an own commit above a held position does not move the router past it; a feed joining from below gets both', async () => {
    // Given a router with no feed open, and a writer that drew a position and is held
    const { router, writer } = await start({ gapTimeoutMs: 60_000 });
    const h = await hold();
    // When this process commits a message above it
    const [above] = (
      await writer.append({ messages: [{ messageType: 'Above', body: { above: true } }] })
    ).entries;
    const aboveId = above.status === 'created' ? above.message.id : -1;
    expect(aboveId).toBeGreaterThan(h.position);
    await waitFor(() => !router.stats().busy, 5000, 'the router to settle');
    // Then the router stays below the held position
    expect(router.stats().deliveredUpTo).toBeLessThan(h.position);
    // And a feed that joins from below, then sees the held writer commit, gets both, in order
    const feed = open(router, 1);
    await feed.headAtOpen;
    await h.commit();
    const got = await take(feed, 2);
    expect(got.map((m) => [m.id, m.messageType, m.late ?? false])).toEqual([
      [h.position, 'Held', false],
      [aboveId, 'Above', false],
    ]);
  });

  it('delivers a row that commits inside an abandoned hole to a live feed that passed it, marked late, once', async () => {
    // Given a live feed, and a held writer whose position is abandoned by the gap timeout
    const { router, writer, reader } = await start({ gapTimeoutMs: 200, exactRelease: false });
    const feed = open(router, 1);
    await feed.headAtOpen;
    const h = await hold();
    await writer.append({ messages: [{ messageType: 'Above', body: {} }] });
    const [first] = await take(feed, 1);
    expect(first).toMatchObject({ messageType: 'Above' });
    expect(first.id).toBeGreaterThan(h.position);
    expect(await reader.safeHead()).toBeGreaterThanOrEqual(first.id);
    // When the held writer commits after all
    await h.commit();
    // Then the feed gets it, marked late, and then the next message in order, with no repeat
    const [late] = await take(feed, 1);
    expect(late).toMatchObject({ id: h.position, messageType: 'Held', late: true });
    const [after] = (await writer.append({ messages: [{ messageType: 'After', body: {} }] }))
      .entries;
    const [next] = await take(feed, 1);
    expect(next).toMatchObject({
      messageType: 'After',
      id: after.status === 'created' ? after.message.id : -1,
    });
    expect(next.late).toBeUndefined();
    expect(router.stats().lateDeliveries).toBe(1);
  });

  it('a late arrival reaches a feed that passed the hole while replaying history', async () => {
    // Given a hole abandoned before any feed opened, with a message above it
    const { router, writer, reader } = await start({ gapTimeoutMs: 100, exactRelease: false });
    const h = await hold();
    const [above] = (await writer.append({ messages: [{ messageType: 'Above', body: {} }] }))
      .entries;
    const aboveId = above.status === 'created' ? above.message.id : -1;
    await waitFor(
      async () => (await reader.safeHead()) >= aboveId,
      5000,
      'the hole to be abandoned',
    );
    // When a feed replays over it, and then the held writer commits
    const feed = open(router, 1);
    expect((await take(feed, 1))[0].id).toBe(aboveId);
    await h.commit();
    // Then the feed gets the arrival, marked late
    expect((await take(feed, 1))[0]).toMatchObject({ id: h.position, late: true });
  });

  it('a slow feed that has not reached an abandoned position yet when its row arrives gets it late once it passes it', async () => {
    // Given a live feed, a router that hears of nothing by itself (a minute's poll, raw writes without NOTIFY)
    const { router, writer, reader } = await start({
      gapTimeoutMs: 100,
      exactRelease: false,
      livePollMs: 60_000,
    });
    const feed = open(router, 1);
    await feed.headAtOpen;
    await waitFor(() => !router.stats().busy, 5000, 'the router to settle');
    // And, unknown to the router, a committed row, a held position above it that gets abandoned, and a row above that
    const below = await hold();
    await below.commit();
    const h = await hold();
    const aboveRaw = await hold();
    await aboveRaw.commit();
    await waitFor(
      async () => (await reader.safeHead()) >= aboveRaw.position,
      5000,
      'the hole to be abandoned',
    );
    // When an own commit makes the router read past all of it (in one read or, when an earlier
    // read took the first row, in two), and the feed takes only the first message
    const [own] = (await writer.append({ messages: [{ messageType: 'Own', body: {} }] })).entries;
    const ownId = own.status === 'created' ? own.message.id : -1;
    await waitFor(
      () => router.stats().deliveredUpTo >= ownId,
      5000,
      'the router to read past the hole',
    );
    expect((await take(feed, 1))[0].id).toBe(below.position);
    // And the held row commits while the feed is still below it
    await h.commit();
    // The feed watches the position from when the router passed it (not from when its consumer
    // takes the next message): the router's re-scan finds the arrival meanwhile
    await waitFor(
      () => router.stats().lateDeliveries === 1,
      10_000,
      'the late arrival to reach the feed',
    );
    // Then the feed yields it marked late right after it passes its position, and only once
    const rest = await take(feed, 3);
    expect(rest.map((m) => [m.id, m.late ?? false])).toEqual([
      [aboveRaw.position, false],
      [h.position, true],
      [rest[2].id, false],
    ]);
    expect(rest[2].messageType).toBe('Own');
  });

  it('a feed resuming from a bookmark above an abandoned position gets its late arrival (watchAbandonedBelow)', async () => {
    // Given a hole abandoned below a message
    const { router, writer, reader } = await start({ gapTimeoutMs: 100, exactRelease: false });
    const h = await hold();
    const [above] = (await writer.append({ messages: [{ messageType: 'Above', body: {} }] }))
      .entries;
    const aboveId = above.status === 'created' ? above.message.id : -1;
    await waitFor(
      async () => (await reader.safeHead()) >= aboveId,
      5000,
      'the hole to be abandoned',
    );
    // When a consumer resumes after it, watching what it passed before, and the held row commits
    const feed = router.open({ fromIndex: aboveId + 1, watchAbandonedBelow: {} });
    feeds.push(feed);
    await feed.headAtOpen;
    await h.commit();
    // Then it gets the row, marked late
    expect((await take(feed, 1))[0]).toMatchObject({ id: h.position, late: true });
  });

  it('a consumer resuming from a bookmark gets an arrival another process found while it was away (arrived since its bookmark was saved)', async () => {
    // Given a hole abandoned below a message, and a consumer that saved its bookmark above it and stopped
    const { router, writer, reader, context } = await start({
      gapTimeoutMs: 100,
      exactRelease: false,
      lateRescanMs: 60_000,
    });
    const h = await hold();
    const [above] = (await writer.append({ messages: [{ messageType: 'Above', body: {} }] }))
      .entries;
    const aboveId = above.status === 'created' ? above.message.id : -1;
    await waitFor(
      async () => (await reader.safeHead()) >= aboveId,
      5000,
      'the hole to be abandoned',
    );
    const bookmarkSavedAt = new Date();
    // When the row commits and a watermark re-scan (any process's) claims it as arrived
    await h.commit();
    const watermark = context.get(LogWatermark);
    await waitFor(
      async () => (await watermark.rescanLate()).includes(h.position),
      5000,
      'the re-scan to claim the arrival',
    );
    // Then the consumer, resuming after its bookmark, still gets it, marked late
    const feed = router.open({
      fromIndex: aboveId + 1,
      watchAbandonedBelow: { arrivedSince: bookmarkSavedAt },
    });
    feeds.push(feed);
    expect((await take(feed, 1))[0]).toMatchObject({ id: h.position, late: true });
  });

  it('a new process starts at the watermark the first one reached: no hole is held again, the head never goes back', async () => {
    // Given a process whose watermark passed a rolled-back hole and an abandoned one
    const first = await start({ gapTimeoutMs: 300 });
    const rolledBack = await hold();
    await rolledBack.rollback();
    const abandoned = await hold();
    await first.writer.append({ messages: [{ messageType: 'Above', body: {} }] });
    const reached = await (async () => {
      let head = 0;
      await waitFor(
        async () => (head = await first.reader.safeHead()) > abandoned.position,
        5000,
        'the first watermark to pass both holes',
      );
      return head;
    })();
    // When a second process starts on the same log while the abandoned writer is still open
    const second = await start({ gapTimeoutMs: 60_000 });
    // Then its first safe head is already at least where the first one was
    expect(await second.reader.safeHead()).toBeGreaterThanOrEqual(reached);
    expect(second.router.stats().deliveredUpTo).toBeGreaterThanOrEqual(reached);
  });
});
