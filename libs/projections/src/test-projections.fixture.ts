import { Injectable } from '@nestjs/common';
import { DomainEvent } from '@ordinal/event-sourcing';
import type { EntityManager } from 'typeorm';
import { EventHandler } from './decorators/event-handler.decorator.js';
import { Projection } from './decorators/projection.decorator.js';
import type { ProjectionContext } from './projection-context.js';

/** v2 added `currency`; v1 events are upcast on read. */
@DomainEvent('OrderPlaced', { schemaVersion: 2 })
export class OrderPlaced {
  constructor(
    readonly orderId: string,
    readonly amount: number,
    readonly currency: string,
  ) {}
}

/** What the fixture projections saw, for assertions. */
export interface Seen {
  index: number;
  isReplay: boolean;
  isLate: boolean;
  event: unknown;
}

/** Controls shared by the test and its projections (a provider, so nothing is static). */
@Injectable()
export class ProjectionProbe {
  readonly seen: Seen[] = [];
  /** Handlers throw on a body with `fail: true` while this is set. */
  broken = false;
  /** When set, the handler of this order id blocks on `gate` once. */
  blockOn: string | null = null;
  gate: Promise<void> | null = null;
  blockedPid: number | null = null;
}

/** The read model: one row per order, totals per currency (SQL in the batch's transaction). */
@Projection('order-summary')
@Injectable()
export class OrderSummaryProjection {
  constructor(private readonly probe: ProjectionProbe) {}

  @EventHandler(OrderPlaced)
  async onPlaced(event: OrderPlaced, ctx: ProjectionContext): Promise<void> {
    this.probe.seen.push({ index: ctx.index, isReplay: ctx.isReplay, isLate: ctx.isLate, event });
    if (this.probe.blockOn === event.orderId && this.probe.gate) {
      const [{ pid }] = await ctx.manager.query<{ pid: number }[]>(
        'SELECT pg_backend_pid() AS pid',
      );
      this.probe.blockedPid = pid;
      const gate = this.probe.gate;
      this.probe.gate = null;
      await gate;
    }
    await ctx.manager.query(
      'INSERT INTO order_summary (order_id, amount, currency, last_index) VALUES ($1, $2, $3, $4)',
      [event.orderId, event.amount, event.currency, ctx.index],
    );
  }

  @EventHandler('OrderCancelled')
  async onCancelled(
    body: { orderId: string; fail?: boolean },
    ctx: ProjectionContext,
  ): Promise<void> {
    if (body.fail && this.probe.broken) throw new Error(`cannot cancel ${body.orderId}`);
    await ctx.manager.query('DELETE FROM order_summary WHERE order_id = $1', [body.orderId]);
  }

  /** A rebuild empties the read model first (in the rebuild's transaction). */
  async reset(manager: EntityManager): Promise<void> {
    await manager.query('DELETE FROM order_summary');
  }
}

/** A second projection that never fails: it keeps running while the other retries. */
@Projection('order-count')
@Injectable()
export class OrderCountProjection {
  @EventHandler('OrderPlaced', 'OrderCancelled')
  async on(_body: unknown, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.query(
      `INSERT INTO order_count (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = order_count.n + 1`,
    );
  }

  async reset(manager: EntityManager): Promise<void> {
    await manager.query('DELETE FROM order_count');
  }
}

/** The read-model tables (a user's own migration would create them). */
export const READ_MODEL_DDL = `
  CREATE TABLE order_summary (order_id text PRIMARY KEY, amount int NOT NULL, currency text NOT NULL, last_index bigint NOT NULL);
  CREATE TABLE order_count (id int PRIMARY KEY, n int NOT NULL);`;

/** Upcaster of OrderPlaced v1 (no currency) to v2. */
export const orderPlacedV1 = {
  eventType: 'OrderPlaced',
  fromVersion: 1,
  upcast: (data: Record<string, unknown>) => ({ ...data, currency: 'EUR' }),
};
