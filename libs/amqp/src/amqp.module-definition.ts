import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { AmqpModuleOptions } from './amqp-options.js';

export const {
  ConfigurableModuleClass: AmqpConfigurableModule,
  MODULE_OPTIONS_TOKEN: AMQP_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<AmqpModuleOptions>().setClassMethodName('forRoot').build();
