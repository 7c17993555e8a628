import { Aggregate, AggregateRoot } from '@ordinal/nestjs';
import { OrderPlaced } from './order-placed.event.js';
import { ItemAdded } from './item-added.event.js';
import { OrderShipped } from './order-shipped.event.js';
import { OrderRuleError } from './order-rule.error.js';

/** One line of an order. */
export interface OrderLine {
  sku: string;
  qty: number;
  price: number;
}

/**
 * ACME's order: commands check the rules and `apply` events; `on<Event>` handlers change state
 * (for new events and on replay alike). Snapshotted every 500 events.
 */
@Aggregate({ events: [OrderPlaced, ItemAdded, OrderShipped], snapshotEvery: 500 })
export class Order extends AggregateRoot {
  status: 'new' | 'placed' | 'shipped' = 'new';
  customer = '';
  email = '';
  lines: OrderLine[] = [];
  total = 0;

  place(customer: string, email: string): void {
    if (this.status !== 'new')
      throw new OrderRuleError(`Order ${this.id} is already ${this.status}`);
    this.apply(new OrderPlaced(customer, email));
  }

  addItem(sku: string, qty: number, price: number): void {
    if (this.status !== 'placed')
      throw new OrderRuleError(
        `Order ${this.id} is ${this.status}; items can be added to placed orders only`,
      );
    this.apply(new ItemAdded(sku, qty, price));
  }

  ship(): void {
    if (this.status !== 'placed')
      throw new OrderRuleError(`Order ${this.id} is ${this.status}; only placed orders ship`);
    this.apply(new OrderShipped(new Date().toISOString()));
  }

  onOrderPlaced(event: OrderPlaced): void {
    this.status = 'placed';
    this.customer = event.customer;
    this.email = event.email;
  }

  onItemAdded(event: ItemAdded): void {
    this.lines.push({ sku: event.sku, qty: event.qty, price: event.price });
    this.total = Math.round((this.total + event.qty * event.price) * 100) / 100;
  }

  onOrderShipped(): void {
    this.status = 'shipped';
  }
}
