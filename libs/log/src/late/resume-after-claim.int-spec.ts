import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { take } from '@ordinal/test-support/feed-take';
import { waitFor } from '@ordinal/test-support/test-server';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import { LiveRouter } from '../router/live-router.service.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';
import type { LogFeed } from '../router/log-feed.js';

/**
 * A durable consumer saves its bookmark while a late arrival is already claimed (any process's
 * re-scan stamped `arrived_at`) but not yet handed to it: its feed had found the row, or was
 * about to, and the consumer stopped before it pulled it. The feed that resumes from that
 * bookmark must still deliver it. (Resuming with the time of the save as `arrivedSince` lost
 * it: the arrival was claimed before.)
 */
describe('A consumer resuming from a bookmark saved after an arrival was claimed, before it was delivered', () => {
  let db: TestDatabase;
  let context: INestApplicationContext | null = null;
  const clients: pg.Client[] = [];
  const feeds: LogFeed[] = [];

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const feed of feeds.splice(0)) feed.close();
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await context?.close();
    context = null;
    await db.drop();
  });

  /** A transaction that drew a position inside its INSERT and holds it open. */
  const hold = async () => {
    const client = new pg.Client({ connectionString: db.url, application_name: 'held-writer' });
    await client.connect();
    clients.push(client);
    await client.query('BEGIN');
    await client.query('SELECT pg_current_xact_id()');
    const { rows } = await client.query<{ index: number }>(
      `INSERT INTO messages (index, message_type, body, content_hash)
       VALUES (nextval('messages_index_seq'), 'Held', '{}'::jsonb, 'h') RETURNING index::int AS index`,
    );
    return { position: rows[0].index, commit: () => client.query('COMMIT') };
  };

  /**
   * Given a hole abandoned below a message, and a consumer's feed that passed both, opened
   * before the hole was abandoned (`live`: the router's read passes it) or after (its replay
   * does). The router's own late checks and the periodic re-scan are far apart: only the
   * calls below look for the arrival.
   */
  async function passedHole(live: boolean) {
    context = await startLogContext(db.url, {
      ordering: 'concurrent',
      gapTimeoutMs: 100,
      exactRelease: false,
      lateRescanMs: 60_000,
    });
    const router = context.get(LiveRouter);
    const held = await hold();
    const feed = live ? router.open({ fromIndex: 1 }) : null;
    if (feed) await feed.headAtOpen;
    const [above] = (
      await context.get(LogWriter).append({ messages: [{ messageType: 'Above', body: {} }] })
    ).entries;
    if (above.status !== 'created') throw new Error('the message above was not created');
    const reader = context.get(LogReader);
    await waitFor(
      async () => (await reader.safeHead()) >= above.message.id,
      5000,
      'the hole to be abandoned',
    );
    const consumer = feed ?? router.open({ fromIndex: 1 });
    feeds.push(consumer);
    expect((await take(consumer, 1))[0].id).toBe(above.message.id);
    return {
      router,
      watermark: context.get(LogWatermark),
      held,
      above: above.message.id,
      consumer,
    };
  }

  /** The held row commits and a re-scan (any process's) claims it as arrived. */
  async function commitAndClaim(
    watermark: LogWatermark,
    held: { position: number; commit(): Promise<unknown> },
  ) {
    await held.commit();
    await waitFor(
      async () => (await watermark.rescanLate()).includes(held.position),
      5000,
      'the re-scan to claim the arrival',
    );
  }

  /**
   * The consumer saves its bookmark (the message it got last, and its feed's `arrivedSince`)
   * and stops, then resumes from it.
   */
  function saveStopAndResume(router: LiveRouter, consumer: LogFeed, position: number): LogFeed {
    const bookmark = { position, arrivedSince: consumer.arrivedSince };
    consumer.close();
    const resumed = router.open({
      fromIndex: bookmark.position + 1,
      watchAbandonedBelow: { arrivedSince: bookmark.arrivedSince },
    });
    feeds.push(resumed);
    return resumed;
  }

  it('a live feed: the router had handed the arrival to the feed, the consumer had not pulled it', async () => {
    const { router, watermark, held, above, consumer } = await passedHole(true);
    // When the row commits, is claimed, and the router hands it to the feed
    await commitAndClaim(watermark, held);
    await waitFor(
      () => router.stats().lateDeliveries === 1,
      5000,
      'the router to hand the arrival to the feed',
    );
    // And the consumer saves its bookmark and stops before it pulled the arrival
    const resumed = saveStopAndResume(router, consumer, above);
    // Then the feed resuming from that bookmark delivers it, marked late
    expect((await take(resumed, 1, 3000))[0]).toMatchObject({ id: held.position, late: true });
  });

  it('a replaying feed: the consumer got the message above the hole, the arrival was claimed before it saved', async () => {
    const { router, watermark, held, above, consumer } = await passedHole(false);
    // When the row commits and is claimed before the consumer saves its bookmark and stops
    await commitAndClaim(watermark, held);
    const resumed = saveStopAndResume(router, consumer, above);
    // Then the feed resuming from that bookmark delivers it, marked late
    expect((await take(resumed, 1, 3000))[0]).toMatchObject({ id: held.position, late: true });
  });
});
