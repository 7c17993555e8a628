import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SubscriptionsModuleOptions } from './subscriptions-options.js';

export const {
  ConfigurableModuleClass: SubscriptionsConfigurableModule,
  MODULE_OPTIONS_TOKEN: SUBSCRIPTIONS_OPTIONS,
} = new ConfigurableModuleBuilder<SubscriptionsModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
