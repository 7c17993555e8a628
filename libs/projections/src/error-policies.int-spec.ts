import type { INestApplicationContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { LogWriter, type NewMessage } from '@ordinal/log';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { EventHandler } from './decorators/event-handler.decorator.js';
import { Projection } from './decorators/projection.decorator.js';
import type { ProjectionContext } from './projection-context.js';
import { ProjectionsService } from './projections.service.js';
import { OrderPlaced, orderPlacedV1 } from './test-projections.fixture.js';

/** The poison: an order the handler refuses while `broken` is set. */
@Injectable()
class Poison {
  broken = true;
}

async function record(
  poison: Poison,
  projection: string,
  event: OrderPlaced,
  ctx: ProjectionContext,
): Promise<void> {
  if (event.orderId === 'poison' && poison.broken) throw new Error(`refusing ${event.orderId}`);
  await ctx.manager.query(
    'INSERT INTO policy_orders (projection, order_id, currency, index) VALUES ($1, $2, $3, $4)',
    [projection, event.orderId, event.currency, ctx.index],
  );
}

@Projection('policy-stop', { onError: { retries: 2, then: 'stop' } })
@Injectable()
class StopProjection {
  constructor(private readonly poison: Poison) {}
  @EventHandler(OrderPlaced)
  on(event: OrderPlaced, ctx: ProjectionContext) {
    return record(this.poison, 'policy-stop', event, ctx);
  }
}

@Projection('policy-skip', { onError: { retries: 2, then: 'skip' } })
@Injectable()
class SkipProjection {
  constructor(private readonly poison: Poison) {}
  @EventHandler(OrderPlaced)
  on(event: OrderPlaced, ctx: ProjectionContext) {
    return record(this.poison, 'policy-skip', event, ctx);
  }
}

@Projection('policy-park', { onError: { retries: 2, then: 'park' } })
@Injectable()
class ParkProjection {
  constructor(private readonly poison: Poison) {}
  @EventHandler(OrderPlaced)
  on(event: OrderPlaced, ctx: ProjectionContext) {
    return record(this.poison, 'policy-park', event, ctx);
  }
  async reset(manager: import('typeorm').EntityManager) {
    await manager.query(`DELETE FROM policy_orders WHERE projection = 'policy-park'`);
  }
}

const placed = (orderId: string): NewMessage => ({
  messageType: 'OrderPlaced',
  body: { orderId, amount: 1 },
  schemaVersion: 1,
});

describe('error policies: stop, skip, park (and replay after a fix, through the upcasters)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let indices: number[];

  // Each test has its own database, app and batch: none relies on what an earlier one left.
  beforeEach(async () => {
    db = await createTestDatabase();
    await db.query(
      'CREATE TABLE policy_orders (projection text NOT NULL, order_id text NOT NULL, currency text NOT NULL, index bigint NOT NULL)',
    );
    app = await startProjectionsApp(db.url, {
      providers: [Poison, StopProjection, SkipProjection, ParkProjection],
      eventSourcing: { upcasters: [orderPlacedV1] },
    });
    // Given one batch with a good order, the poison (stored as v1, upcast on read) and another good one
    const result = await app.get(LogWriter).append({
      messages: [placed('a'), placed('poison'), placed('b')],
      skipDuplicateWindow: true,
    });
    indices = result.entries.map((e) => (e.status === 'created' ? e.message.id : -1));
  });
  afterEach(async () => {
    await app?.close();
    await db?.drop();
  });

  const status = async (name: string) => (await app.get(SubscriptionsService).report(name))[0];
  const orders = async (projection: string) =>
    (
      await db.query<{ order_id: string; currency: string }>(
        'SELECT order_id, currency FROM policy_orders WHERE projection = $1 ORDER BY index',
        [projection],
      )
    ).map((r) => `${r.order_id}:${r.currency}`);

  const stoppedBy = (name: string, what: string) =>
    waitFor(
      async () => {
        const s = await status(name);
        return s.state === 'stopped' ? s : null;
      },
      30_000,
      what,
    );

  it('skip: after the retries, the events around the poison commit and the checkpoint moves over it', async () => {
    await app.get(ProjectionsService).waitFor(SkipProjection, indices[2], 30_000);
    expect(await orders('policy-skip')).toEqual(['a:EUR', 'b:EUR']);
    const s = await status('policy-skip');
    expect(s).toMatchObject({ state: 'running', skipped: 1, parked: 0 });
    expect(s.lastError).toContain(`failed at index ${indices[1]}`);
  });

  it('park: the poison is kept with its error and position, shown in the status; after a fix it replays', async () => {
    // Then it is parked and the projection moved on
    await app.get(ProjectionsService).waitFor(ParkProjection, indices[2], 30_000);
    expect(await orders('policy-park')).toEqual(['a:EUR', 'b:EUR']);
    expect(await status('policy-park')).toMatchObject({ state: 'running', parked: 1 });
    const [parked] = await app.get(ProjectionsService).listParked(ParkProjection);
    expect(parked).toMatchObject({
      consumer: 'policy-park',
      position: indices[1],
      messageType: 'OrderPlaced',
      attempts: 3,
    });
    expect(parked.error).toContain('refusing poison');
  });

  it('stop: after the retries it stops with the error shown, applies nothing of the batch, and resumes after a fix', async () => {
    const stopped = await stoppedBy('policy-stop', 'the stop policy to stop');
    expect(stopped.position).toBeLessThan(indices[0]);
    expect(stopped.lastError).toContain('refusing poison');
    expect(await orders('policy-stop')).toEqual([]);
    // When a message is appended after it stopped, and a running projection has applied it
    // (every subscription of the process was woken by it: a live loop would have run again)
    const marker = await app.get(LogWriter).append({
      messages: [placed('after-stop')],
      skipDuplicateWindow: true,
    });
    const markerIndex = marker.entries[0].status === 'created' ? marker.entries[0].message.id : -1;
    await app.get(ProjectionsService).waitFor(SkipProjection, markerIndex, 30_000);
    // Then it is still stopped where it was: no more retries, nothing applied
    expect(await status('policy-stop')).toMatchObject({
      state: 'stopped',
      retries: stopped.retries,
      position: stopped.position,
    });
    expect(await orders('policy-stop')).toEqual([]);
  });

  it('after the fix: the parked message replays through the upcaster, and the stopped projection resumes', async () => {
    // Given the poison parked by one projection and another stopped at it
    await app.get(ProjectionsService).waitFor(ParkProjection, indices[2], 30_000);
    expect(await status('policy-park')).toMatchObject({ parked: 1 });
    await stoppedBy('policy-stop', 'the stop policy to stop');
    // When the handler is fixed
    app.get(Poison).broken = false;
    // And the parked message is replayed from code
    const result = await app.get(ProjectionsService).replayParked(ParkProjection);
    expect(result).toEqual({ replayed: 1, remaining: 0, error: null });
    expect(await orders('policy-park')).toEqual(['a:EUR', 'poison:EUR', 'b:EUR']);
    expect(await status('policy-park')).toMatchObject({ parked: 0 });
    // And the stopped one resumes from where it stopped, with nothing skipped
    await app.get(SubscriptionsService).resume('policy-stop');
    await app.get(ProjectionsService).waitFor(StopProjection, indices[2], 30_000);
    expect(await orders('policy-stop')).toEqual(['a:EUR', 'poison:EUR', 'b:EUR']);
  });

  it('during a rebuild the default is stop: a poison at or below the replay boundary stops the park projection instead of parking', async () => {
    // Given the park projection at the end of the log with every order (the handler fixed)
    app.get(Poison).broken = false;
    await app.get(ProjectionsService).waitFor(ParkProjection, indices[2], 30_000);
    expect(await orders('policy-park')).toEqual(['a:EUR', 'poison:EUR', 'b:EUR']);
    // And the handler broken again, and a rebuild
    app.get(Poison).broken = true;
    await app.get(ProjectionsService).rebuild(ParkProjection);
    // Then the replay stops at the poison, parking nothing
    const stopped = await stoppedBy('policy-park', 'the rebuild to stop at the poison');
    expect(stopped.parked).toBe(0);
    expect(stopped.lastError).toContain('refusing poison');
    // When fixed and resumed, the rebuild completes
    app.get(Poison).broken = false;
    await app.get(SubscriptionsService).resume('policy-park');
    await app.get(ProjectionsService).waitFor(ParkProjection, indices[2], 30_000);
    expect(await orders('policy-park')).toEqual(['a:EUR', 'poison:EUR', 'b:EUR']);
  });
});
