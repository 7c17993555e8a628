import { Module } from '@nestjs/common';
import {
  SUBSCRIPTIONS_OPTIONS,
  SUBSCRIPTIONS_RAW_OPTIONS,
  SubscriptionsConfigurableModule,
} from './subscriptions.module-definition.js';
import {
  resolveSubscriptionsOptions,
  type SubscriptionsModuleOptions,
} from './subscriptions-options.js';
import { SubscriptionsLifecycle } from './subscriptions-lifecycle.service.js';
import { SubscriptionsService } from './subscriptions.service.js';
import { ConsumersHealthIndicator } from './directory/consumers-health.indicator.js';
import { ConsumerGroupsService } from './groups/consumer-groups.service.js';

/**
 * Subscriptions from checkpoints by type, category or `$all`. Needs the global `LogModule` and
 * a TypeORM DataSource (OrdinalModule.forRoot sets both up); runs the checkpoints migration at
 * start. `SubscriptionsModule.forRoot({ isGlobal: true })` or `forRootAsync`.
 */
@Module({
  providers: [
    {
      provide: SUBSCRIPTIONS_OPTIONS,
      useFactory: (options: SubscriptionsModuleOptions) => resolveSubscriptionsOptions(options),
      inject: [SUBSCRIPTIONS_RAW_OPTIONS],
    },
    SubscriptionsService,
    SubscriptionsLifecycle,
    ConsumersHealthIndicator,
    ConsumerGroupsService,
  ],
  exports: [
    SubscriptionsService,
    ConsumersHealthIndicator,
    ConsumerGroupsService,
    SUBSCRIPTIONS_OPTIONS,
  ],
})
export class SubscriptionsModule extends SubscriptionsConfigurableModule {}
