import { Module, type DynamicModule, type INestApplicationContext, type Provider, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventSourcingModule, EventStoreModule, type AggregateClass, type EventSourcingOptions } from '@ordinal/event-sourcing';
import type { AggregateRoot } from '@ordinal/event-sourcing';
import type { LogModuleOptions } from '@ordinal/log';

/** What a suite's Nest context is built from: aggregates, upcasters and extra modules/providers. */
export interface EventStoreContextOptions {
  aggregates?: AggregateClass<AggregateRoot>[];
  upcasters?: Provider[];
  imports?: (Type | DynamicModule)[];
  providers?: Provider[];
  log?: LogModuleOptions;
  eventSourcing?: EventSourcingOptions;
}

/**
 * A user's Nest application embedding Ordinal (EventStoreModule.forRoot on the suite's
 * database), started as an application context without HTTP.
 */
export async function startEventStoreContext(databaseUrl: string, options: EventStoreContextOptions = {}): Promise<INestApplicationContext> {
  @Module({
    imports: [
      EventStoreModule.forRoot({ url: databaseUrl, typeorm: { extra: { max: 10 } }, log: { duplicateWindow: 0, ...options.log }, eventSourcing: options.eventSourcing }),
      EventSourcingModule.forFeature(options.aggregates ?? [], options.upcasters ?? []),
      ...(options.imports ?? []),
    ],
    providers: options.providers ?? [],
  })
  class SuiteModule {}
  const app = await NestFactory.createApplicationContext(SuiteModule, { logger: process.env.ORDINAL_TEST_LOGS ? undefined : false });
  await app.init();
  return app;
}
