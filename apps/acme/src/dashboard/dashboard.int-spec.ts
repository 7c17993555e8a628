import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OrdinalModule, ProjectionsService } from '@ordinal/nestjs';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { OrdersModule } from '../orders/orders.module.js';
import { OrdersService } from '../orders/orders.service.js';
import { DASHBOARD_ENTITIES, DASHBOARD_MIGRATIONS, DashboardModule } from './dashboard.module.js';
import { OrderDashboardProjection } from './order-dashboard.projection.js';
import { OrderDashboardRow } from './order-dashboard.entity.js';

describe('ACME dashboard projection (docs/projections.md walkthrough)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Given ACME's application with its orders, projections and the dashboard
    @Module({
      imports: [
        OrdinalModule.forRoot({
          url: db.url,
          entities: DASHBOARD_ENTITIES,
          migrations: DASHBOARD_MIGRATIONS,
        }),
        OrdersModule,
        DashboardModule,
      ],
    })
    class AcmeModule {}
    app = await NestFactory.createApplicationContext(AcmeModule, { logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('keeps one row per order, and a rebuild reproduces it', async () => {
    // When an order goes through its life
    const orders = app.get(OrdersService);
    await orders.place('order-7', 'bob', 'bob@example.com');
    await orders.addItem('order-7', 'GADGET-7', 2, 10);
    const shipped = await orders.ship('order-7');
    const [{ m: head }] = await app
      .get(DataSource)
      .query<{ m: number }[]>('SELECT max(index)::int AS m FROM messages');
    // Then the dashboard shows it once the projection has reached the last event
    const projections = app.get(ProjectionsService);
    await projections.waitFor(OrderDashboardProjection, head, 10_000);
    const rows = () => app.get(DataSource).manager.find(OrderDashboardRow);
    expect(await rows()).toEqual([
      expect.objectContaining({
        orderId: 'order-7',
        customer: 'bob',
        items: 2,
        total: 20,
        shipped: true,
      }),
    ]);
    expect(shipped.version).toBe(3);
    // And a rebuild gives the same rows
    const before = await rows();
    await projections.rebuild(OrderDashboardProjection);
    await projections.waitFor(OrderDashboardProjection, head, 10_000);
    expect(await rows()).toEqual(before);
  });
});
