import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { OrderShipped } from './order-shipped.event.js';

/** An ordinary @nestjs/cqrs handler: it receives OrderShipped after the save commits. */
@EventsHandler(OrderShipped)
export class OrderShippedHandler implements IEventHandler<OrderShipped> {
  readonly shipped: OrderShipped[] = [];

  handle(event: OrderShipped): void {
    this.shipped.push(event);
  }
}
