import type { INestApplicationContext } from '@nestjs/common';
import { LogWatermark } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { startProjectionsApp, RawWriter } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { SubscriptionsService } from '../subscriptions.service.js';

interface Seen {
  index: number;
  isLate: boolean;
}

/**
 * A subscription saves its checkpoint while a late arrival is already claimed (another
 * process's watermark re-scan stamped `arrived_at`) but not yet delivered to it (its own late
 * check runs every `lateCheckMs`), then stops. Resuming, it must still deliver it: it resumed
 * its watch from the checkpoint's save time, after the claim, and lost it.
 */
describe('A subscription resuming from a checkpoint saved after an arrival was claimed, before it was delivered', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | null = null;
  let other: INestApplicationContext | null = null;
  const writers: RawWriter[] = [];

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(writers.splice(0).map((w) => w.end()));
    await app?.close();
    app = null;
    await other?.close();
    other = null;
    await db.drop();
  });

  /**
   * The application: concurrent mode, a hole abandoned after 100 ms (no exact release), and
   * neither its watermark's re-scan nor the subscription's late check coming round by itself
   * (a first late check still runs as soon as the subscription watches a position).
   */
  const start = async () => {
    app = await startProjectionsApp(db.url, {
      log: {
        ordering: 'concurrent',
        gapTimeoutMs: 100,
        exactRelease: false,
        lateRescanMs: 600_000,
      },
      subscriptions: { lateCheckMs: 600_000 },
    });
    const subscriptions = app.get(SubscriptionsService);
    const seen: Seen[] = [];
    subscriptions.subscribe({
      name: 'all',
      stream: '$all',
      handle: (m, ctx) => void seen.push({ index: m.id, isLate: ctx.isLate }),
    });
    return { subscriptions, seen };
  };
  const writer = async () => {
    const w = await RawWriter.open(db.url);
    writers.push(w);
    return w;
  };
  const commitOne = async (category: string) => {
    const w = await writer();
    await w.begin();
    const [p] = await w.insert(category);
    await w.commit();
    return p;
  };

  /**
   * Given a subscription that passed a hole abandoned below a committed message; when the
   * held row commits, another process's re-scan claims it, and the subscription saves its
   * checkpoint after the claim without having delivered it; and it stops.
   */
  async function claimedBeforeSaveThenStopped() {
    const first = await start();
    const held = await writer();
    await held.begin();
    const [hole] = await held.insert('order');
    const above = await commitOne('invoice');
    await first.subscriptions.waitFor('all', above, 10_000);
    // (one more message after it: its first, empty, look at the hole is made by then)
    const next = await commitOne('invoice');
    await first.subscriptions.waitFor('all', next, 10_000);
    expect((await first.subscriptions.report('all'))[0].pendingLate).toEqual([hole]);
    await held.commit();
    other = await startLogContext(db.url, { ordering: 'concurrent', lateRescanMs: 600_000 });
    const rescanning = other.get(LogWatermark);
    await waitFor(
      async () => (await rescanning.rescanLate()).includes(hole),
      5000,
      'the other process to claim the arrival',
    );
    const last = await commitOne('invoice');
    await first.subscriptions.waitFor('all', last, 10_000);
    const [saved] = await db.query<{ after: boolean }>(
      `SELECT c.updated_at > s.arrived_at AS after FROM checkpoints c, log_skipped s
       WHERE c.name = 'all' AND s.position = $1`,
      [hole],
    );
    expect(saved.after).toBe(true);
    expect(first.seen.map((s) => s.index)).toEqual([above, next, last]);
    await app!.close();
    app = null;
    return hole;
  }

  /** Starts again and waits for the arrival at `hole`; returns what the subscription got. */
  async function restartAndTakeArrival(hole: number) {
    const second = await start();
    await waitFor(
      () => second.seen.some((s) => s.index === hole),
      10_000,
      'the arrival to be delivered after the restart',
    );
    await waitFor(
      async () => (await second.subscriptions.report('all'))[0].lateDelivered === 1,
      10_000,
      'the late delivery to commit',
    );
    return second;
  }

  it('delivers the arrival after the restart, marked late, and nothing else again', async () => {
    // Given a checkpoint saved after the claim of an arrival it had not delivered, and a stop
    const hole = await claimedBeforeSaveThenStopped();
    // When it starts again
    const second = await restartAndTakeArrival(hole);
    // Then it delivers the arrival, marked late, and nothing it had applied
    expect(second.seen).toEqual([{ index: hole, isLate: true }]);
    // And it owes nothing any more once that delivery committed, in memory and in its row
    expect((await second.subscriptions.report('all'))[0].pendingLate).toEqual([]);
    const [row] = await db.query<{ none: boolean }>(
      `SELECT late_owed_since = 'infinity' AS none FROM checkpoints WHERE name = 'all'`,
    );
    expect(row.none).toBe(true);
  });

  it('resumes a checkpoint written before it saved what it owes from its save time, as before', async () => {
    // Given the same stop, its row as a version that did not save what it owed wrote it
    // (saved just before the claim, which it resumes from)
    const hole = await claimedBeforeSaveThenStopped();
    await db.query(
      `UPDATE checkpoints SET late_owed_since = NULL,
         updated_at = (SELECT arrived_at - interval '1 millisecond' FROM log_skipped WHERE position = $1)
       WHERE name = 'all'`,
      [hole],
    );
    // When it starts again
    const second = await restartAndTakeArrival(hole);
    // Then it delivers the arrival claimed after that save, marked late
    expect(second.seen).toEqual([{ index: hole, isLate: true }]);
  });
});
