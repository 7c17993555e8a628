import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import type { LogModuleOptions } from '@ordinal/log';
import type { EventSourcingOptions } from './event-sourcing-options.js';

/** Options of `EventStoreModule.forRoot`. Every default lives in `resolveEventStoreOptions`. */
export interface EventStoreModuleOptions {
  /** PostgreSQL connection URL (TypeORM `url`). Ignored with `useExistingDataSource`. */
  url?: string;
  /** More TypeORM options for the DataSource this module creates (pool size, ssl, …). */
  typeorm?: Partial<Extract<TypeOrmModuleOptions, { type?: 'postgres' }>>;
  /** The application already has `TypeOrmModule.forRoot` for PostgreSQL: use its DataSource. @default false */
  useExistingDataSource?: boolean;
  /** Options of the log (ordering, duplicate window, batch bounds, StartMarker). */
  log?: LogModuleOptions;
  /** Options of the event-sourcing core (page size, upcasters, publishing). */
  eventSourcing?: EventSourcingOptions;
  /** Import `CqrsModule.forRoot()` so saved events reach the EventBus; false if you import it yourself with options. @default true */
  cqrs?: boolean;
}

export type ResolvedEventStoreOptions = Required<Pick<EventStoreModuleOptions, 'useExistingDataSource' | 'cqrs'>> &
  Omit<EventStoreModuleOptions, 'useExistingDataSource' | 'cqrs'>;

/** Applies the defaults, in this one place. */
export function resolveEventStoreOptions(options: EventStoreModuleOptions): ResolvedEventStoreOptions {
  return { ...options, useExistingDataSource: options.useExistingDataSource ?? false, cqrs: options.cqrs ?? true };
}
