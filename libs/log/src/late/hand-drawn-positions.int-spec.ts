import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { take } from '@ordinal/test-support/feed-take';
import type { LogModuleOptions } from '../log-options.js';
import { SEQUENCE } from '../log.constants.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import { LiveRouter } from '../router/live-router.service.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';
import type { LogFeed } from '../router/log-feed.js';
import { LateTracker } from './late-tracker.js';
import { DataSource } from 'typeorm';

/** A log in concurrent mode in its own Nest context on the suite's database. */
const startLog = (url: string, options: LogModuleOptions) =>
  startLogContext(url, { ordering: 'concurrent', ...options });

/** Inserts a row at a position chosen outside the INSERT (the shape Ordinal never writes). */
const insertAt = (client: pg.Client | { query: pg.Client['query'] }, index: number) =>
  client.query(
    `INSERT INTO messages (index, message_type, user_id, body, content_hash)
     VALUES ($1, 'ByHand', 'u-hand', '{"byHand":true}'::jsonb, 'h')`,
    [index],
  );

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('Positions drawn outside an INSERT (concurrent mode): never lost', () => {
  let db: TestDatabase;
  let context: INestApplicationContext;
  const clients: pg.Client[] = [];
  const feeds: LogFeed[] = [];

  const start = async (options: LogModuleOptions) => {
    context = await startLog(db.url, options);
    return {
      router: context.get(LiveRouter),
      writer: context.get(LogWriter),
      reader: context.get(LogReader),
      watermark: context.get(LogWatermark),
    };
  };
  const session = async () => {
    const client = new pg.Client({ connectionString: db.url, application_name: 'by-hand' });
    await client.connect();
    clients.push(client);
    return client;
  };
  const open = async (router: LiveRouter, fromIndex = 1) => {
    const feed = router.open({ fromIndex });
    feeds.push(feed);
    await feed.headAtOpen;
    return feed;
  };
  /** The position's late watch, as another session sees it: is it over? */
  const watchOver = async (position: number) =>
    (
      await db.query<{ over: boolean }>(
        'SELECT watch_until <= now() AS over FROM log_skipped WHERE position = $1',
        [position],
      )
    )[0]?.over === true;
  const appendAbove = async (writer: LogWriter) => {
    const [entry] = (await writer.append({ messages: [{ messageType: 'Above', body: {} }] }))
      .entries;
    if (entry.status !== 'created') throw new Error('the append above was not created');
    return entry.message.id;
  };

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const feed of feeds.splice(0)) feed.close();
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await context?.close();
    await db.drop();
  });

  it('holds a position drawn by nextval in a transaction still open, and delivers its row in order', async () => {
    // Given a live feed, and a session that drew a position with nextval and holds its transaction open
    const { router, writer, reader } = await start({ gapTimeoutMs: 60_000 });
    const feed = await open(router);
    const s = await session();
    await s.query('BEGIN');
    const drawn = Number(
      (await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    // When Ordinal commits a message above it
    const above = await appendAbove(writer);
    // Then the watermark holds below the drawn position (its writer is still running)
    expect(await reader.safeHead()).toBe(drawn - 1);
    // And when the session inserts there and commits, the feed gets both, in order
    await insertAt(s, drawn);
    await s.query('COMMIT');
    const got = await take(feed, 2, 8000);
    expect(got.map((m) => [m.id, m.late ?? false])).toEqual([
      [drawn, false],
      [above, false],
    ]);
  });

  it('delivers late, and counts, a row inserted at a position drawn by a transaction that had ended (released exactly)', async () => {
    // Given a live feed, and a position drawn by nextval in its own transaction, now ended
    const { router, writer, reader, watermark } = await start({ gapTimeoutMs: 60_000 });
    const feed = await open(router);
    const s = await session();
    const drawn = Number(
      (await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    // When Ordinal commits above it, the watermark passes it at once (no running writer can fill it)
    const above = await appendAbove(writer);
    expect((await take(feed, 1, 8000))[0].id).toBe(above);
    expect(await reader.safeHead()).toBeGreaterThanOrEqual(above);
    // And the session inserts at the drawn position later after all
    await insertAt(s, drawn);
    // Then the feed gets it, marked late, once, and the watermark counts it
    expect((await take(feed, 1, 20_000))[0]).toMatchObject({ id: drawn, late: true });
    await waitFor(
      () => watermark.counters.lateArrivals === 1,
      5000,
      'the watermark to count the late arrival',
    );
  });

  it('delivers a late row of a deleted stream as its tombstone, never its body', async () => {
    // Given a live feed, a tombstoned stream, and a position drawn by nextval in its own transaction
    const { router, writer } = await start({ gapTimeoutMs: 60_000 });
    await db.query(`INSERT INTO stream_states (stream_id, state) VALUES ('gone-1', 'tombstoned')`);
    const feed = await open(router);
    const s = await session();
    const drawn = Number(
      (await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    const above = await appendAbove(writer);
    expect((await take(feed, 1, 8000))[0].id).toBe(above);
    // When a row of that stream is inserted at the drawn position after all
    await s.query(
      `INSERT INTO messages (index, message_type, stream_id, stream_version, category, body, content_hash)
       VALUES ($1, 'ByHand', 'gone-1', 1, 'gone', '{"secret":true}'::jsonb, 'h')`,
      [drawn],
    );
    // Then the feed gets it late, as readers read it: a tombstone without its body
    expect((await take(feed, 1, 20_000))[0]).toMatchObject({
      id: drawn,
      late: true,
      tombstone: 'deleted',
      body: null,
    });
  });

  it('delivers late a row inserted with an explicit index at a rolled-back position the watermark released', async () => {
    // Given a live feed, and a writer that drew a position inside its INSERT and rolled back
    const { router, writer, watermark } = await start({ gapTimeoutMs: 60_000 });
    const feed = await open(router);
    const s = await session();
    await s.query('BEGIN');
    const drawn = Number(
      (
        await s.query<{ p: string }>(
          `INSERT INTO messages (index, message_type, body, content_hash)
           VALUES (nextval('${SEQUENCE}'), 'T', '{}'::jsonb, 'h') RETURNING index::text AS p`,
        )
      ).rows[0].p,
    );
    await s.query('ROLLBACK');
    const above = await appendAbove(writer);
    expect((await take(feed, 1, 8000))[0].id).toBe(above);
    // When another session inserts a row at that position by hand
    await insertAt(await session(), drawn);
    // Then the feed gets it late, and the watermark counts it
    expect((await take(feed, 1, 20_000))[0]).toMatchObject({ id: drawn, late: true });
    await waitFor(
      () => watermark.counters.lateArrivals === 1,
      5000,
      'the watermark to count the late arrival',
    );
  });

  it('delivers late a row whose transaction drew by hand, had no transaction id, and outlived the gap timeout', async () => {
    // Given a sequence that has just logged ahead (so the next nextval assigns no transaction id)
    const { router, writer } = await start({ gapTimeoutMs: 200 });
    const feed = await open(router);
    const s = await session();
    await s.query(`SELECT nextval('${SEQUENCE}')`);
    // And a transaction that drew by hand, has no id, and stays open past the gap timeout
    const drawWithoutId = async () => {
      for (let attempt = 1; ; attempt++) {
        await s.query('BEGIN');
        const drawn = await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}')::text AS p`);
        const id = await s.query<{ xid: string | null }>(
          'SELECT pg_current_xact_id_if_assigned() AS xid',
        );
        if (id.rows[0].xid === null) return Number(drawn.rows[0].p);
        // That nextval wrote WAL (the first after a checkpoint) and took an id: draw again.
        await s.query('ROLLBACK');
        if (attempt === 3) throw new Error('nextval took a transaction id three times running');
      }
    };
    const drawn = await drawWithoutId();
    const above = await appendAbove(writer);
    expect((await take(feed, 1, 8000))[0].id).toBe(above);
    // When it inserts, well after every transaction that was running when the hole was passed has ended
    await writer.append({ messages: [{ messageType: 'Later', body: {} }] });
    await take(feed, 1, 8000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await insertAt(s, drawn);
    await s.query('COMMIT');
    // Then the feed still gets it, late
    expect((await take(feed, 1, 20_000))[0]).toMatchObject({ id: drawn, late: true });
  });

  it('a feed resuming above an exactly released position gets the row that arrives there later', async () => {
    // Given a position drawn by an ended transaction, released exactly below a message
    const { router, writer, reader } = await start({ gapTimeoutMs: 60_000 });
    const s = await session();
    const drawn = Number(
      (await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    const above = await appendAbove(writer);
    await waitFor(async () => (await reader.safeHead()) >= above, 5000, 'the watermark to pass');
    // When a consumer resumes after it, watching what it passed before, and the row arrives
    const feed = router.open({ fromIndex: above + 1, watchAbandonedBelow: {} });
    feeds.push(feed);
    await feed.headAtOpen;
    await insertAt(s, drawn);
    // Then it gets the row, marked late
    expect((await take(feed, 1, 20_000))[0]).toMatchObject({ id: drawn, late: true });
  });
  it('a process that starts past a hole drawn by hand (its start-up shortcut) still delivers the row inserted there later', async () => {
    // Given, before any process runs, a position drawn by an ended transaction and a row committed above it
    // (the first start runs the migrations)
    await start({ gapTimeoutMs: 60_000 });
    await context.close();
    const s = await session();
    const drawn = Number(
      (await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    const above = Number(
      (
        await s.query<{ p: string }>(
          `INSERT INTO messages (index, message_type, body, content_hash)
           VALUES (nextval('${SEQUENCE}'), 'Above', '{}'::jsonb, 'h') RETURNING index::text AS p`,
        )
      ).rows[0].p,
    );
    // When a process starts (its watermark jumps to the drawn head at once) and a feed reads from the start
    const { router } = await start({ gapTimeoutMs: 60_000 });
    const feed = await open(router);
    expect((await take(feed, 1, 8000))[0].id).toBe(above);
    // And the row is inserted at the drawn position after all
    await insertAt(s, drawn);
    // Then the feed gets it, late
    expect((await take(feed, 1, 20_000))[0]).toMatchObject({ id: drawn, late: true });
  });

  it('refuses a row inserted by hand at a position whose late watch is over, with a clear error, and stores nothing', async () => {
    // Given a position drawn by an ended transaction, released exactly below a message, watched 50 ms
    const { router, writer } = await start({ gapTimeoutMs: 60_000, lateWatchMs: 50 });
    const feed = await open(router);
    const s = await session();
    const drawn = Number(
      (await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    const above = await appendAbove(writer);
    expect((await take(feed, 1, 8000))[0].id).toBe(above);
    await waitFor(() => watchOver(drawn), 5000, 'the late watch of the drawn position to end');
    // When the session inserts there after all, with the drawn position and with an explicit index
    const refusal = { code: '23514', constraint: 'messages_index_passed' };
    await expect(insertAt(s, drawn)).rejects.toMatchObject(refusal);
    // Then it is refused, naming the position and the setting, and nothing is stored
    await expect(insertAt(await session(), drawn)).rejects.toThrow(
      new RegExp(`position ${drawn} .*ORDINAL_LATE_WATCH_MS`),
    );
    expect(await db.query('SELECT 1 FROM messages WHERE index = $1', [drawn])).toEqual([]);
  });

  it('refuses a row inserted by hand at a position passed unrecorded (a long start-up jump), with the same error', async () => {
    // Given a log whose watermark was written down past positions never recorded one by one
    await start({ gapTimeoutMs: 60_000 });
    await context.close();
    const s = await session();
    await s.query(`SELECT setval('${SEQUENCE}', 2000000)`);
    await s.query(`INSERT INTO messages (index, message_type, body, content_hash)
                   VALUES (nextval('${SEQUENCE}'), 'Above', '{}'::jsonb, 'h')`);
    const { reader } = await start({ gapTimeoutMs: 60_000 });
    await waitFor(async () => (await reader.safeHead()) >= 2_000_001, 5000, 'the jump');
    // When a session inserts in the middle of the jump
    // Then it is refused
    await expect(insertAt(s, 1_000_000)).rejects.toMatchObject({
      code: '23514',
      constraint: 'messages_index_passed',
    });
  });

  it('a row inserted while its position was watched, committed after the watch ended, still reaches a live feed, the late count and a live tracker', async () => {
    // Given a live feed, and a position released exactly below a message, watched for three seconds (time enough for the insert on a loaded machine)
    const { router, writer, watermark } = await start({
      gapTimeoutMs: 60_000,
      lateWatchMs: 3000,
      lateRescanMs: 50,
    });
    const feed = await open(router);
    const s = await session();
    const drawn = Number(
      (await s.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    const above = await appendAbove(writer);
    expect((await take(feed, 1, 8000))[0].id).toBe(above);
    const tracker = new LateTracker();
    const xmax = (
      await db.query<{ x: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x')
    )[0].x;
    tracker.add([drawn], xmax);
    // When a transaction inserts there while it is watched, and holds on until the watch is over
    await s.query('BEGIN');
    await insertAt(s, drawn);
    await waitFor(() => watchOver(drawn), 10_000, 'the late watch of the drawn position to end');
    const manager = context.get(DataSource).manager;
    // Then a tracker still waits for it while that transaction runs
    expect(await tracker.check(manager)).toEqual([]);
    expect(tracker.positions()).toEqual([drawn]);
    // And once it commits, the tracker, the live feed and the late count all get it
    await s.query('COMMIT');
    expect((await tracker.check(manager)).map((m) => m.id)).toEqual([drawn]);
    expect((await take(feed, 1, 20_000))[0]).toMatchObject({ id: drawn, late: true });
    await waitFor(
      () => watermark.counters.lateArrivals === 1,
      5000,
      'the watermark to count the late arrival',
    );
  });
});
