import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LogModuleOptions } from './log-options.js';

export const {
  ConfigurableModuleClass: LogConfigurableModule,
  /** The options as given to `forRoot`/`forRootAsync` (unresolved). */
  MODULE_OPTIONS_TOKEN: LOG_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<LogModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** Injection token of the resolved log options (`ResolvedLogOptions`): defaults applied once, here. */
export const LOG_MODULE_OPTIONS = Symbol('LOG_MODULE_OPTIONS');
