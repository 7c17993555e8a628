import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SubscriptionsModuleOptions } from './subscriptions-options.js';

export const {
  ConfigurableModuleClass: SubscriptionsConfigurableModule,
  /** The options as given to `forRoot`/`forRootAsync` (unresolved). */
  MODULE_OPTIONS_TOKEN: SUBSCRIPTIONS_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<SubscriptionsModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** Injection token of the resolved options (`ResolvedSubscriptionsOptions`): defaults applied once, here. */
export const SUBSCRIPTIONS_OPTIONS = Symbol('SUBSCRIPTIONS_OPTIONS');
