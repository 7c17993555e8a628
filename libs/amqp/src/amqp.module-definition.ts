import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { AmqpModuleOptions } from './amqp-options.js';

export const {
  ConfigurableModuleClass: AmqpConfigurableModule,
  /** The options as given to `forRoot`/`forRootAsync` (unresolved). */
  MODULE_OPTIONS_TOKEN: AMQP_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<AmqpModuleOptions>().setClassMethodName('forRoot').build();

/** Injection token of the resolved options (`ResolvedAmqpOptions`): defaults applied once, here. */
export const AMQP_MODULE_OPTIONS = Symbol('AMQP_MODULE_OPTIONS');
