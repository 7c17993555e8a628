import type { INestApplicationContext } from '@nestjs/common';
import { LogWatermark, type LogModuleOptions } from '@ordinal/log';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp, RawWriter } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { SubscriptionsService } from './subscriptions.service.js';
import type { SubscriptionStream } from './source/subscription-stream.js';
import type { SubscriptionsModuleOptions } from './subscriptions-options.js';

interface Seen {
  index: number;
  isLate: boolean;
  isReplay: boolean;
}

describe('Subscriptions in concurrent mode (S1-S5, real concurrent transactions)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | undefined;
  let subscriptions: SubscriptionsService;
  let watermark: LogWatermark;
  const writers: RawWriter[] = [];

  const start = async (log: LogModuleOptions, options: SubscriptionsModuleOptions = {}) => {
    app = await startProjectionsApp(db.url, {
      log: { ordering: 'concurrent', ...log },
      subscriptions: options,
    });
    subscriptions = app.get(SubscriptionsService);
    watermark = app.get(LogWatermark);
  };
  const writer = async () => {
    const w = await RawWriter.open(db.url);
    writers.push(w);
    return w;
  };
  const collect = (name: string, stream: SubscriptionStream): Seen[] => {
    const seen: Seen[] = [];
    subscriptions.subscribe({
      name,
      stream,
      handle: (m, ctx) =>
        void seen.push({ index: m.id, isLate: ctx.isLate, isReplay: ctx.isReplay }),
    });
    return seen;
  };
  /** Commits one message in its own transaction; returns its position. */
  const commitOne = async (category: string) => {
    const w = await writer();
    await w.begin();
    const [p] = await w.insert(category);
    await w.commit();
    return p;
  };
  /** A held, B (another category) committed above it. */
  const holeBelowCommit = async () => {
    const a = await writer();
    const b = await writer();
    await a.begin();
    const [pa] = await a.insert('order');
    await b.begin();
    const [pb] = await b.insert('invoice');
    await b.commit();
    expect(pb).toBeGreaterThan(pa);
    return { a, pa, pb };
  };

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(writers.splice(0).map((w) => w.end()));
    await app?.close();
    app = undefined;
    await db.drop();
  });

  it('does not pass a lower position held open by another category, then delivers both in index order', async () => {
    // Given a $all subscription that has applied one committed message
    await start({ gapTimeoutMs: 60_000 });
    const seen = collect('all', '$all');
    const first = await commitOne('customer');
    await subscriptions.waitFor('all', first, 5000);
    // When A takes a lower position and stays open while B commits a higher one
    const { a, pa, pb } = await holeBelowCommit();
    // Then, while the watermark holds A's position, the subscription stays below it
    await waitFor(
      () => (watermark.heldHole?.from === pa && watermark.heldHole.heldMs >= 300 ? true : null),
      10_000,
      'the hole held 300 ms',
    );
    expect(seen.map((s) => s.index)).toEqual([first]);
    expect((await subscriptions.report('all'))[0].position).toBeLessThan(pa);
    // When A commits, both arrive, in index order
    await a.commit();
    await subscriptions.waitFor('all', pb, 5000);
    expect(seen.map((s) => s.index)).toEqual([first, pa, pb]);
  });

  it('moves past a rolled-back hole at once (exact release), even while a long transaction holds xmin back', async () => {
    // Given an unrelated long transaction holding the cluster's xmin, and a hole held by A
    const idle = new pg.Client({ connectionString: db.url });
    await idle.connect();
    try {
      await idle.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await idle.query('SELECT pg_current_xact_id(), count(*) FROM pg_class');
      await start({ gapTimeoutMs: 30_000 });
      const seen = collect('all', '$all');
      const { a, pa, pb } = await holeBelowCommit();
      await waitFor(() => watermark.heldHole?.from === pa, 10_000, 'the hole');
      // When A rolls back
      const rolledBack = Date.now();
      await a.rollback();
      // Then the subscription delivers B well before the 30 s timeout
      await subscriptions.waitFor('all', pb, 5000);
      expect(Date.now() - rolledBack).toBeLessThan(2000);
      expect(seen.map((s) => s.index)).toEqual([pb]);
      expect(watermark.counters.holesReleasedExactly).toBeGreaterThanOrEqual(1);
      expect(watermark.counters.holesAbandoned).toBe(0);
    } finally {
      await idle.query('ROLLBACK').catch(() => undefined);
      await idle.end();
    }
  });

  it('with exact release off, moves past a rolled-back hole only at the gap timeout', async () => {
    // Given exact release off and a 1 s gap timeout
    await start({ gapTimeoutMs: 1000, exactRelease: false });
    const seen = collect('all', '$all');
    const { a, pb } = await holeBelowCommit();
    const committed = Date.now();
    // When A rolls back at once
    await a.rollback();
    // Then B is delivered only once the hole has been held for the timeout
    await subscriptions.waitFor('all', pb, 10_000);
    expect(Date.now() - committed).toBeGreaterThanOrEqual(900);
    expect(seen.map((s) => s.index)).toEqual([pb]);
    expect(watermark.counters.holesAbandoned).toBe(1);
  });

  it('a category subscription skips the watermark: it delivers while $all holds at a hole in another category (S5)', async () => {
    // Given a $all and a category subscription
    await start({ gapTimeoutMs: 60_000 });
    const all = collect('all', '$all');
    const invoices = collect('invoices', { category: 'invoice' });
    // When A (order) is held open below B (invoice)
    const { a, pa, pb } = await holeBelowCommit();
    // Then the invoice subscription gets B at once while $all holds
    await subscriptions.waitFor('invoices', pb, 5000);
    expect(invoices.map((s) => s.index)).toEqual([pb]);
    // (the watermark sees the hole on its own next scan, which may come after B's delivery)
    await waitFor(() => watermark.heldHole?.from === pa, 5000, 'the watermark to hold at A');
    expect(all).toEqual([]);
    await a.commit();
    await subscriptions.waitFor('all', pb, 5000);
    expect(all.map((s) => s.index)).toEqual([pa, pb]);
    expect(invoices.map((s) => s.index)).toEqual([pb]);
  });

  it('delivers a writer slower than the gap timeout as a late arrival, without moving the checkpoint back', async () => {
    // Given a short gap timeout and a quick re-scan
    await start({ gapTimeoutMs: 300, lateRescanMs: 200 }, { lateCheckMs: 100 });
    const seen = collect('all', '$all');
    // When A is held open past the timeout while B commits above it
    const { a, pa, pb } = await holeBelowCommit();
    await subscriptions.waitFor('all', pb, 10_000);
    expect(seen.map((s) => s.index)).toEqual([pb]);
    expect((await subscriptions.report('all'))[0].pendingLate).toEqual([pa]);
    // And A finally commits
    await a.commit();
    // Then the subscription gets A, marked late, and its checkpoint stays where it was
    await waitFor(() => seen.find((s) => s.index === pa), 10_000, 'the late arrival');
    expect(seen).toEqual([
      { index: pb, isLate: false, isReplay: false },
      { index: pa, isLate: true, isReplay: false },
    ]);
    // (the handler runs before its transaction commits: wait for the commit to be counted)
    const status = await waitFor(
      async () => {
        const [s] = await subscriptions.report('all');
        return s.lateDelivered === 1 ? s : undefined;
      },
      10_000,
      'the late delivery to commit',
    );
    expect(status.position).toBeGreaterThanOrEqual(pb);
    expect(status.pendingLate).toEqual([]);
    await waitFor(() => watermark.counters.lateArrivals >= 1, 10_000, 'the late-arrival counter');
    const [row] = await db.query<{ position: string }>(
      `SELECT position FROM checkpoints WHERE name = 'all'`,
    );
    expect(Number(row.position)).toBeGreaterThanOrEqual(pb);
  });
});
