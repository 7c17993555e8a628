import {
  Module,
  type DynamicModule,
  type INestApplicationContext,
  type Provider,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  OrdinalModule,
  type AggregateClass,
  type AggregateRoot,
  type OrdinalModuleOptions,
} from '@ordinal/nestjs';

/** What a suite's Nest context is built from: aggregates, upcasters and extra modules/providers. */
export interface EventStoreContextOptions {
  aggregates?: AggregateClass<AggregateRoot>[];
  upcasters?: Provider[];
  imports?: (Type | DynamicModule)[];
  providers?: Provider[];
  log?: OrdinalModuleOptions['log'];
  eventSourcing?: OrdinalModuleOptions['eventSourcing'];
}

/**
 * A user's Nest application embedding Ordinal (OrdinalModule.forRoot on the suite's
 * database), started as an application context without HTTP.
 */
export async function startEventStoreContext(
  databaseUrl: string,
  options: EventStoreContextOptions = {},
): Promise<INestApplicationContext> {
  @Module({
    imports: [
      OrdinalModule.forRoot({
        url: databaseUrl,
        typeorm: { extra: { max: 10 } },
        log: { duplicateWindow: 0, ...options.log },
        eventSourcing: options.eventSourcing,
      }),
      OrdinalModule.forFeature(options.aggregates ?? [], { upcasters: options.upcasters ?? [] }),
      ...(options.imports ?? []),
    ],
    providers: options.providers ?? [],
  })
  class SuiteModule {}
  const app = await NestFactory.createApplicationContext(SuiteModule, {
    logger: process.env.ORDINAL_TEST_LOGS ? undefined : false,
  });
  await app.init();
  return app;
}
