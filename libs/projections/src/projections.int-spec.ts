import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter, type NewMessage } from '@ordinal/log';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { ProjectionsService } from './projections.service.js';
import {
  OrderCountProjection,
  OrderPlaced,
  OrderSummaryProjection,
  ProjectionProbe,
  READ_MODEL_DDL,
  orderPlacedV1,
} from './test-projections.fixture.js';

const placed = (orderId: string, amount: number, schemaVersion = 2): NewMessage => ({
  messageType: 'OrderPlaced',
  body: schemaVersion === 1 ? { orderId, amount } : { orderId, amount, currency: 'USD' },
  schemaVersion,
});
const cancelled = (orderId: string, fail = false): NewMessage => ({
  messageType: 'OrderCancelled',
  body: { orderId, fail },
});

describe('Projections (S7-S9) on a real database', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | undefined;

  const start = async (withProjections = true) => {
    app = await startProjectionsApp(db.url, {
      providers: withProjections
        ? [ProjectionProbe, OrderSummaryProjection, OrderCountProjection]
        : [],
      eventSourcing: { upcasters: [orderPlacedV1] },
    });
    return app;
  };
  const stop = async () => {
    await app?.close();
    app = undefined;
  };
  const append = async (messages: NewMessage[]) => {
    const result = await app!.get(LogWriter).append({ messages, skipDuplicateWindow: true });
    return result.entries.map((e) => (e.status === 'created' ? e.message.id : -1));
  };
  const summary = () =>
    db.query<{ order_id: string; amount: number; currency: string }>(
      'SELECT order_id, amount, currency FROM order_summary ORDER BY order_id',
    );
  const status = async (name: string) => (await app!.get(SubscriptionsService).report(name))[0];

  beforeEach(async () => {
    db = await createTestDatabase();
    await db.query(READ_MODEL_DDL);
  });
  afterEach(async () => {
    await stop();
    await db.drop();
  });

  it('report() lists every consumer, the subscriptions from code beside the projections, each with its owner and standbys', async () => {
    // Given the projections and a subscription from code in one process
    await start();
    app!.get(SubscriptionsService).subscribe({
      name: 'mailer',
      stream: { types: ['OrderPlaced'] },
      handle: () => undefined,
    });
    const [last] = await append([placed('o1', 10)]);
    await app!.get(SubscriptionsService).waitFor('mailer', last, 10_000);
    // When ProjectionsService reports
    const report = await waitFor(
      async () => {
        const r = await app!.get(ProjectionsService).report();
        return r.every((c) => c.owner) && r.length === 3 ? r : null;
      },
      10_000,
      'every consumer owned',
    );
    // Then the subscription is there too, as every consumer is, owned by this process with nobody standing by
    expect(report.map((r) => [r.name, r.kind])).toEqual([
      ['mailer', 'subscription'],
      ['order-count', 'projection'],
      ['order-summary', 'projection'],
    ]);
    for (const r of report) {
      expect(r.owner).toMatchObject({ self: true, pid: process.pid, stale: false });
      expect(r.standbys).toEqual([]);
      // (this process runs them: what only the owner knows is there)
      expect(r.retries).toBe(0);
    }
  });

  it('applies class and type-name handlers with the checkpoint; isReplay holds up to the boundary, across a restart (S8)', async () => {
    // Given two events written before the projection ever ran (one of schema v1)
    await start(false);
    const before = await append([placed('o1', 10, 1), placed('o2', 20)]);
    await stop();
    // When the projection starts for the first time
    await start();
    const probe = app!.get(ProjectionProbe);
    const projections = app!.get(ProjectionsService);
    await projections.waitFor(OrderSummaryProjection, before[1], 10_000);
    // Then the history is replay, the event is an upcast instance of its class
    expect(probe.seen.map((s) => [s.index, s.isReplay])).toEqual([
      [before[0], true],
      [before[1], true],
    ]);
    expect(probe.seen[0].event).toBeInstanceOf(OrderPlaced);
    expect(probe.seen[0].event).toEqual(
      Object.assign(Object.create(OrderPlaced.prototype), {
        orderId: 'o1',
        amount: 10,
        currency: 'EUR',
      }),
    );
    expect(await summary()).toEqual([
      { order_id: 'o1', amount: 10, currency: 'EUR' },
      { order_id: 'o2', amount: 20, currency: 'USD' },
    ]);
    // And a new event is live
    const [live] = await append([placed('o3', 30)]);
    await projections.waitFor('order-summary', live, 10_000);
    expect(probe.seen.at(-1)).toMatchObject({ index: live, isReplay: false });
    // When the projection is down while more events arrive
    await stop();
    await start(false);
    const meanwhile = await append([placed('o4', 40), cancelled('o1')]);
    await stop();
    await start();
    await app!.get(ProjectionsService).waitFor('order-summary', meanwhile[1], 10_000);
    // Then they still count as live (the boundary was stored with the checkpoint), and the type-name handler applied the cancel
    expect(app!.get(ProjectionProbe).seen.map((s) => [s.index, s.isReplay])).toEqual([
      [meanwhile[0], false],
    ]);
    expect((await summary()).map((r) => r.order_id)).toEqual(['o2', 'o3', 'o4']);
    const [row] = await db.query<{ position: string; live_from: string }>(
      `SELECT position, live_from FROM checkpoints WHERE name = 'order-summary'`,
    );
    expect([Number(row.position), Number(row.live_from)]).toEqual([meanwhile[1], before[1]]);
  });

  it('a handler error rolls back its batch, is retried with back-off and shown; other projections keep running; nothing is skipped', async () => {
    // Given a projection whose cancel handler is broken
    await start();
    const probe = app!.get(ProjectionProbe);
    probe.broken = true;
    // When one batch holds a good event, the failing one and another good one
    const [first, bad, last] = await append([
      placed('o1', 10),
      cancelled('o1', true),
      placed('o2', 20),
    ]);
    // Then the healthy projection gets everything
    await app!.get(ProjectionsService).waitFor(OrderCountProjection, last, 10_000);
    // And the failing one retries, shows the error, and applied nothing of the batch
    await waitFor(
      async () => {
        const s = await status('order-summary');
        return s.state === 'failed' && (s.retries ?? 0) >= 3 ? s : null;
      },
      10_000,
      'retries of the failing projection',
    );
    const failing = await status('order-summary');
    expect(failing.position).toBeLessThan(first);
    expect(failing.lastError).toContain(`failed at index ${bad}`);
    expect(failing.lastError).toContain('cannot cancel o1');
    expect(await summary()).toEqual([]);
    const [row] = await db.query<{ state: string; last_error: string }>(
      `SELECT state, last_error FROM checkpoints WHERE name = 'order-summary'`,
    );
    expect(row.state).toBe('failed');
    expect(row.last_error).toContain('cannot cancel o1');
    // When the handler is fixed, the projection catches up with nothing skipped
    probe.broken = false;
    await app!.get(ProjectionsService).waitFor(OrderSummaryProjection, last, 10_000);
    expect((await summary()).map((r) => r.order_id)).toEqual(['o2']);
    expect((await status('order-summary')).state).toBe('running');
  });

  it('rebuild clears the read model and reproduces it; the replay boundary moves to the head', async () => {
    // Given a projection that has applied some events live
    await start();
    const ids = await append([
      placed('o1', 10),
      placed('o2', 20),
      cancelled('o1'),
      placed('o3', 30),
    ]);
    const projections = app!.get(ProjectionsService);
    await projections.waitFor(OrderSummaryProjection, ids[3], 10_000);
    const built = await summary();
    const probe = app!.get(ProjectionProbe);
    probe.seen.length = 0;
    // When it is rebuilt
    await projections.rebuild(OrderSummaryProjection);
    await projections.waitFor(OrderSummaryProjection, ids[3], 10_000);
    // Then the read model is the same, and every replayed event was marked replay
    expect(await summary()).toEqual(built);
    expect(probe.seen.map((s) => [s.index, s.isReplay])).toEqual([
      [ids[0], true],
      [ids[1], true],
      [ids[3], true],
    ]);
    expect((await status('order-summary')).liveFrom).toBe(ids[3]);
    const [next] = await append([placed('o5', 50)]);
    await projections.waitFor(OrderSummaryProjection, next, 10_000);
    expect(probe.seen.at(-1)).toMatchObject({ index: next, isReplay: false });
  });

  it('a connection dropped between handler and commit loses nothing and applies nothing twice: after restart the read model equals a clean replay', async () => {
    // Given a projection that will block in the middle of a batch
    await start();
    const probe = app!.get(ProjectionProbe);
    const orders = Array.from({ length: 40 }, (_, i) => placed(`o${i}`, i));
    let release!: () => void;
    probe.gate = new Promise((resolve) => (release = resolve));
    probe.blockOn = 'o25';
    const ids = await append(orders);
    await waitFor(() => probe.blockedPid, 10_000, 'the handler to block');
    // When its connection is killed before the commit, and the handler then carries on
    await db.query('SELECT pg_terminate_backend($1)', [probe.blockedPid]);
    release();
    await waitFor(
      async () => (((await status('order-summary')).retries ?? 0) >= 1 ? true : null),
      10_000,
      'the failed batch',
    );
    // And the process goes away and a fresh one starts
    await stop();
    await start();
    await app!.get(ProjectionsService).waitFor(OrderSummaryProjection, ids.at(-1)!, 10_000);
    // Then the read model equals a clean replay: every order once
    const afterCrash = await summary();
    expect(afterCrash).toHaveLength(40);
    expect(afterCrash.map((r) => r.amount).reduce((a, b) => a + b, 0)).toBe((39 * 40) / 2);
    await app!.get(ProjectionsService).rebuild('order-summary');
    await app!.get(ProjectionsService).waitFor(OrderSummaryProjection, ids.at(-1)!, 10_000);
    expect(await summary()).toEqual(afterCrash);
  });
});
