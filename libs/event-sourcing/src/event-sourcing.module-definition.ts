import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { EventSourcingOptions } from './event-sourcing-options.js';

export const {
  ConfigurableModuleClass: EventSourcingConfigurableModule,
  /** The options as given to `forRoot`/`forRootAsync` (unresolved). */
  MODULE_OPTIONS_TOKEN: EVENT_SOURCING_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<EventSourcingOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
