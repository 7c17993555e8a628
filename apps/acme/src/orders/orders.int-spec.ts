import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OrdinalModule, StreamStore, VersionConflictError } from '@ordinal/nestjs';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { waitFor } from '@ordinal/test-support/test-server';
import { OrdersModule } from './orders.module.js';
import { OrdersService } from './orders.service.js';
import { OrderShippedHandler } from './order-shipped.handler.js';
import { OrderRuleError } from './order-rule.error.js';

describe('ACME orders sample (the docs/aggregates.md walkthrough)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let orders: OrdersService;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Given ACME's own Nest application: one OrdinalModule.forRoot and its orders module
    @Module({ imports: [OrdinalModule.forRoot({ url: db.url }), OrdersModule] })
    class AcmeModule {}
    app = await NestFactory.createApplicationContext(AcmeModule, { logger: false });
    await app.init();
    orders = app.get(OrdersService);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('places, fills and ships an order; @EventsHandler gets OrderShipped after commit', async () => {
    // When an order goes through its life
    await orders.place('order-1001', 'alice', 'alice@example.com');
    await orders.addItem('order-1001', 'GADGET-7', 2, 19.99);
    await orders.addItem('order-1001', 'WIDGET-1', 1, 9.99);
    await orders.ship('order-1001');
    // Then it loads back with its state and version
    const order = await orders.get('order-1001');
    expect(order).toMatchObject({ status: 'shipped', customer: 'alice', total: 49.97, version: 4 });
    expect(order!.lines.map((l) => l.sku)).toEqual(['GADGET-7', 'WIDGET-1']);
    // And the ordinary cqrs handler received the shipment
    const handler = app.get(OrderShippedHandler);
    await waitFor(() => handler.shipped.length === 1, 5000, 'OrderShipped on the EventBus');
    const [row] = await db.query<{ category: string; message_type: string }>(
      'SELECT category, message_type FROM messages WHERE stream_id = $1 AND stream_version = 4',
      ['order-1001'],
    );
    expect(row).toEqual({ category: 'order', message_type: 'OrderShipped' });
  });

  it('keeps domain rules and optimistic versions apart', async () => {
    // A second place of the same id is a version conflict (it expects a new stream)
    await expect(orders.place('order-1001', 'bob', 'bob@example.com')).rejects.toBeInstanceOf(
      VersionConflictError,
    );
    // Adding to a shipped order breaks a rule and is not retried
    await expect(orders.addItem('order-1001', 'X', 1, 1)).rejects.toBeInstanceOf(OrderRuleError);
  });

  it('reads an OrderPlaced v1 written by older code through the v1 → v2 upcaster', async () => {
    // Given a v1 event (no email) in the log
    await app
      .get(StreamStore)
      .append('order-legacy', 0, [
        { eventType: 'OrderPlaced', schemaVersion: 1, data: { customer: 'carol' } },
      ]);
    // When it loads, Then the aggregate sees v2 with the default email
    expect(await orders.get('order-legacy')).toMatchObject({
      status: 'placed',
      customer: 'carol',
      email: 'unknown',
    });
  });
});
