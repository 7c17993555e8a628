import { Module } from '@nestjs/common';
import { SubscriptionsConfigurableModule } from './subscriptions.module-definition.js';
import { SubscriptionsLifecycle } from './subscriptions-lifecycle.service.js';
import { SubscriptionsService } from './subscriptions.service.js';
import { ConsumersHealthIndicator } from './directory/consumers-health.indicator.js';

/**
 * Subscriptions from checkpoints by type, category or `$all` (S1-S6). Needs the global
 * `LogModule` and a TypeORM DataSource (EventStoreModule.forRoot sets both up); runs the
 * checkpoints migration at start. `SubscriptionsModule.forRoot({ isGlobal: true })`.
 */
@Module({
  providers: [SubscriptionsService, SubscriptionsLifecycle, ConsumersHealthIndicator],
  exports: [SubscriptionsService, ConsumersHealthIndicator],
})
export class SubscriptionsModule extends SubscriptionsConfigurableModule {}
