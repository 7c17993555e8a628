import { Module } from '@nestjs/common';
import { CreateOrderDashboard1765300000000 } from './create-order-dashboard.migration.js';
import { OrderDashboardProjection } from './order-dashboard.projection.js';
import { OrderDashboardRow } from './order-dashboard.entity.js';

/** The dashboard's migrations, for `OrdinalModule.forRoot({ migrations })`: they run with Ordinal's at start. */
export const DASHBOARD_MIGRATIONS = [CreateOrderDashboard1765300000000];

/** The dashboard's read-model entities, for `OrdinalModule.forRoot({ entities })`. */
export const DASHBOARD_ENTITIES = [OrderDashboardRow];

/**
 * ACME's dashboard. The application imports `OrdinalModule.forRoot({ url, entities:
 * DASHBOARD_ENTITIES, migrations: DASHBOARD_MIGRATIONS })` and this module.
 */
@Module({ providers: [OrderDashboardProjection] })
export class DashboardModule {}
