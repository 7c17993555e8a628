import type { INestApplicationContext } from '@nestjs/common';
import { LogWatermark, type LogModuleOptions } from '@ordinal/log';
import { SEQUENCE } from '@ordinal/log/internal';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp, RawWriter } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { SubscriptionsService } from './subscriptions.service.js';

interface Seen {
  index: number;
  isLate: boolean;
}

/**
 * A position drawn outside Ordinal's INSERT (`nextval` by hand, in a transaction that has
 * ended) is released exactly by the watermark: no running transaction can fill it. A row
 * inserted there later must still reach a subscription whose checkpoint passed it, live or
 * after a restart.
 */
describe('Subscriptions: a row at a position drawn by hand arrives late, never lost', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | undefined;
  const log: LogModuleOptions = { ordering: 'concurrent', gapTimeoutMs: 60_000, lateRescanMs: 100 };

  const start = async (seen: Seen[]) => {
    app = await startProjectionsApp(db.url, { log, subscriptions: { lateCheckMs: 100 } });
    app.get(SubscriptionsService).subscribe({
      name: 'all',
      stream: '$all',
      handle: (m, ctx) => void seen.push({ index: m.id, isLate: ctx.isLate }),
    });
    return app.get(SubscriptionsService);
  };
  /** Draws a position in its own transaction (ended), then commits a row above it the way Ordinal does. */
  const drawnBelowCommit = async () => {
    const [{ p }] = await db.query<{ p: string }>(`SELECT nextval('${SEQUENCE}')::text AS p`);
    const w = await RawWriter.open(db.url);
    await w.begin();
    const [above] = await w.insert('order');
    await w.commit();
    await w.end();
    return { drawn: Number(p), above };
  };
  const insertAt = (index: number) =>
    db.query(
      `INSERT INTO messages (index, message_type, body, content_hash) VALUES ($1, 'ByHand', '{}'::jsonb, 'h')`,
      [index],
    );

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await db.drop();
  });

  it('delivers it late to a running subscription whose checkpoint passed it', async () => {
    // Given a subscription that moved past a position drawn by hand (released exactly)
    const seen: Seen[] = [];
    const subscriptions = await start(seen);
    const { drawn, above } = await drawnBelowCommit();
    await subscriptions.waitFor('all', above, 10_000);
    expect(seen).toEqual([{ index: above, isLate: false }]);
    // When a row is inserted there after all
    await insertAt(drawn);
    // Then the subscription gets it, marked late, once, and the watermark counts it
    await waitFor(() => seen.find((s) => s.index === drawn), 10_000, 'the late arrival');
    expect(seen).toEqual([
      { index: above, isLate: false },
      { index: drawn, isLate: true },
    ]);
    await waitFor(
      () => app!.get(LogWatermark).counters.lateArrivals === 1,
      10_000,
      'the late-arrival counter',
    );
  });

  it('delivers it late after a restart when the row was inserted while the subscription was stopped', async () => {
    // Given a subscription that moved past a position drawn by hand, and then stopped
    const before: Seen[] = [];
    const subscriptions = await start(before);
    const { drawn, above } = await drawnBelowCommit();
    await subscriptions.waitFor('all', above, 10_000);
    await app!.close();
    app = undefined;
    // When a row is inserted there while nothing runs, and the subscription starts again
    await insertAt(drawn);
    const after: Seen[] = [];
    await start(after);
    // Then it gets the row, marked late
    await waitFor(() => after.find((s) => s.index === drawn), 10_000, 'the late arrival');
    expect(after).toEqual([{ index: drawn, isLate: true }]);
  });
});
