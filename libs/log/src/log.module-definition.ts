import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LogModuleOptions } from './log-options.js';

export const {
  ConfigurableModuleClass: LogConfigurableModule,
  MODULE_OPTIONS_TOKEN: LOG_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<LogModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
