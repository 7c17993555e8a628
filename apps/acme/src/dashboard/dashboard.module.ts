import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { runMigrations } from '@ordinal/log';
import { DataSource } from 'typeorm';
import { CreateOrderDashboard1765300000000 } from './create-order-dashboard.migration.js';
import { OrderDashboardProjection } from './order-dashboard.projection.js';

/** Creates the dashboard's table at start (before projections run at bootstrap). */
@Injectable()
export class DashboardMigrations implements OnModuleInit {
  constructor(private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    await runMigrations(this.dataSource, [CreateOrderDashboard1765300000000]);
  }
}

/**
 * ACME's dashboard. The application imports `EventStoreModule.forRoot({ url, typeorm: {
 * entities: [OrderDashboardRow] } })`, `ProjectionsModule.forRoot()` and this module.
 */
@Module({ providers: [DashboardMigrations, OrderDashboardProjection] })
export class DashboardModule {}
