import { Injectable } from '@nestjs/common';
import { AggregateRepository, InjectAggregateRepository } from '@ordinal/nestjs';
import { Order } from './order.aggregate.js';

/** ACME's order commands: each runs against fresh state and retries on a version conflict. */
@Injectable()
export class OrdersService {
  constructor(
    @InjectAggregateRepository(Order) private readonly orders: AggregateRepository<Order>,
  ) {}

  /** Places a new order; a second place of the same id is a version conflict. */
  async place(orderId: string, customer: string, email: string): Promise<Order> {
    const order = this.orders.create(orderId);
    order.place(customer, email);
    await this.orders.save(order);
    return order;
  }

  async addItem(orderId: string, sku: string, qty: number, price: number): Promise<Order> {
    return this.orders.update(orderId, (order) => order.addItem(sku, qty, price), { attempts: 5 });
  }

  async ship(orderId: string): Promise<Order> {
    return this.orders.update(orderId, (order) => order.ship());
  }

  async get(orderId: string): Promise<Order | null> {
    return this.orders.find(orderId);
  }
}
