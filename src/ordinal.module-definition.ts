import { ConfigurableModuleBuilder, type DynamicModule } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventSourcingModule } from '@ordinal/event-sourcing';
import { AccessRules, LogModule } from '@ordinal/log';
import { ProjectionsModule } from '@ordinal/projections';
import { SubscriptionsModule } from '@ordinal/subscriptions';
import {
  resolveOrdinalOptions,
  type OrdinalModuleExtras,
  type OrdinalModuleOptions,
  type ResolvedOrdinalOptions,
} from './ordinal-options.js';
import { openDataSource } from './database/open-data-source.js';

/** Injection token of the resolved options (`ResolvedOrdinalOptions`), the one provider every section is read from. */
export const ORDINAL_OPTIONS = Symbol('ORDINAL_OPTIONS');

const defaultExtras: Required<OrdinalModuleExtras> = { useExistingDataSource: false, cqrs: true };

/**
 * Adds what every OrdinalModule imports. The library modules take their options from the one
 * resolved provider (`ORDINAL_OPTIONS`, visible to them because this module is always global),
 * so `forRoot` and `forRootAsync` build the same graph.
 */
function withLibraries(
  definition: DynamicModule,
  extras: Required<OrdinalModuleExtras>,
): DynamicModule {
  // Read by the DataSource factory, which TypeOrmModule calls with the TypeORM options only.
  let createDatabase = false;
  const fromOrdinal = <K extends keyof ResolvedOrdinalOptions>(key: K) => ({
    isGlobal: true,
    useFactory: (options: ResolvedOrdinalOptions) => options[key],
    inject: [ORDINAL_OPTIONS],
  });
  return {
    ...definition,
    global: true,
    imports: [
      ...(definition.imports ?? []),
      ...(extras.useExistingDataSource
        ? []
        : [
            TypeOrmModule.forRootAsync({
              useFactory: (options: ResolvedOrdinalOptions) => {
                createDatabase = options.createDatabase;
                return options.typeorm!;
              },
              dataSourceFactory: (options) => openDataSource(options!, createDatabase),
              inject: [ORDINAL_OPTIONS],
            }),
          ]),
      LogModule.forRootAsync(fromOrdinal('log')),
      EventSourcingModule.forRootAsync(fromOrdinal('eventSourcing')),
      SubscriptionsModule.forRootAsync(fromOrdinal('subscriptions')),
      ProjectionsModule,
      ...(extras.cqrs ? [CqrsModule.forRoot()] : []),
    ],
    providers: [
      ...(definition.providers ?? []),
      {
        provide: ORDINAL_OPTIONS,
        useFactory: (raw: OrdinalModuleOptions) => resolveOrdinalOptions(raw, extras),
        inject: [ORDINAL_RAW_OPTIONS],
      },
      {
        provide: AccessRules,
        useFactory: (options: ResolvedOrdinalOptions) => new AccessRules(options.access.rules),
        inject: [ORDINAL_OPTIONS],
      },
    ],
    exports: [...(definition.exports ?? []), ORDINAL_OPTIONS, AccessRules],
  };
}

export const {
  ConfigurableModuleClass: OrdinalConfigurableModule,
  /** The options as given to `forRoot` or returned by `forRootAsync`'s factory (unresolved). */
  MODULE_OPTIONS_TOKEN: ORDINAL_RAW_OPTIONS,
  OPTIONS_TYPE: ORDINAL_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ORDINAL_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OrdinalModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras<Required<OrdinalModuleExtras>>(defaultExtras, (definition, extras) =>
    withLibraries(definition, { ...defaultExtras, ...extras }),
  )
  .build();
