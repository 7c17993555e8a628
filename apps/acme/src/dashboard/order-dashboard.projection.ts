import { Injectable, Logger } from '@nestjs/common';
import { EventHandler, Projection, type ProjectionContext } from '@ordinal/nestjs';
import { ItemAdded } from '../orders/item-added.event.js';
import { OrderPlaced } from '../orders/order-placed.event.js';
import { OrderShipped } from '../orders/order-shipped.event.js';
import { OrderDashboardRow } from './order-dashboard.entity.js';

/**
 * ACME's order dashboard: a same-database read model kept by Ordinal. Every write goes through
 * `ctx.manager`, the batch's transaction, so the checkpoint moves with it. The order category
 * is read directly (no watermark wait, S5). Side effects (here a log line standing in for a
 * notification) run only for live events.
 */
@Projection('acme-order-dashboard', {
  readModels: [OrderDashboardRow],
  stream: { category: 'order' },
})
@Injectable()
export class OrderDashboardProjection {
  private readonly logger = new Logger(OrderDashboardProjection.name);

  @EventHandler(OrderPlaced)
  async onPlaced(event: OrderPlaced, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.insert(OrderDashboardRow, {
      orderId: this.orderId(ctx),
      customer: event.customer,
      items: 0,
      total: 0,
      shipped: false,
      lastIndex: ctx.index,
    });
  }

  @EventHandler(ItemAdded)
  async onItemAdded(event: ItemAdded, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.increment(
      OrderDashboardRow,
      { orderId: this.orderId(ctx) },
      'items',
      event.qty,
    );
    await ctx.manager.increment(
      OrderDashboardRow,
      { orderId: this.orderId(ctx) },
      'total',
      event.qty * event.price,
    );
    await ctx.manager.update(
      OrderDashboardRow,
      { orderId: this.orderId(ctx) },
      { lastIndex: ctx.index },
    );
  }

  @EventHandler(OrderShipped)
  async onShipped(_event: OrderShipped, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.update(
      OrderDashboardRow,
      { orderId: this.orderId(ctx) },
      { shipped: true, lastIndex: ctx.index },
    );
    if (!ctx.isReplay)
      this.logger.log(
        `Order ${this.orderId(ctx)} shipped (index ${ctx.index}): notify the customer`,
      );
  }

  /** The order's id is its stream id (`order-1001`). */
  private orderId(ctx: ProjectionContext): string {
    return ctx.message.streamId ?? '';
  }
}
