import { Module, type DynamicModule } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LogModule, OrdinalError } from '@ordinal/log';
import { EventSourcingModule } from './event-sourcing.module.js';
import { resolveEventStoreOptions, type EventStoreModuleOptions } from './event-store-options.js';

/**
 * Ordinal inside your own Nest application, in one import: a TypeORM DataSource for
 * PostgreSQL (or yours), the global-index log, the event-sourcing core and the CQRS EventBus.
 * Add `EventSourcingModule.forFeature([Order])` where repositories are needed.
 */
@Module({})
export class EventStoreModule {
  static forRoot(options: EventStoreModuleOptions): DynamicModule {
    const resolved = resolveEventStoreOptions(options);
    const imports: DynamicModule[] = [];
    if (!resolved.useExistingDataSource) {
      if (!resolved.url && !resolved.typeorm) throw new OrdinalError('invalid_configuration', 'EventStoreModule.forRoot needs a url, typeorm options, or useExistingDataSource: true');
      imports.push(
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: resolved.url,
          entities: [],
          synchronize: false,
          migrationsRun: false,
          ...resolved.typeorm,
        } as Parameters<typeof TypeOrmModule.forRoot>[0]),
      );
    }
    imports.push(LogModule.forRoot({ ...resolved.log, isGlobal: true }), EventSourcingModule.forRoot(resolved.eventSourcing));
    if (resolved.cqrs) imports.push(CqrsModule.forRoot());
    return { module: EventStoreModule, global: true, imports };
  }
}
