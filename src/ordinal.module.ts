import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import {
  EventSourcingModule,
  type AggregateClass,
  type AggregateRoot,
} from '@ordinal/event-sourcing';
import { MigrationSet } from '@ordinal/pg';
import type { MigrationInterface } from 'typeorm';
import { OrdinalConfigurableModule } from './ordinal.module-definition.js';

/** Options of `OrdinalModule.forFeature`. */
export interface OrdinalFeatureOptions {
  /** `@Upcaster` classes of this feature's events (they become providers of the feature and are discovered). @default [] */
  upcasters?: Provider[];
  /** This feature's TypeORM migrations (its read models' tables): they run with Ordinal's and forRoot's at start, in one run under the migration lock. @default [] */
  migrations?: (new () => MigrationInterface)[];
}

/**
 * Ordinal in your NestJS application: `forRoot({ url })` or `forRootAsync({ imports, inject,
 * useFactory })` once, in the root module, sets up the PostgreSQL DataSource (or uses yours),
 * the global-index log, aggregates, subscriptions, `@Projection` discovery and the CQRS
 * EventBus, and runs the migrations (Ordinal's and yours) at start.
 * `forFeature([Order])` in a feature module provides `AggregateRepository<Order>`, injected
 * with `@InjectAggregateRepository(Order)`.
 */
@Module({})
export class OrdinalModule extends OrdinalConfigurableModule {
  /** Repositories of the given `@Aggregate` classes, for the module that imports this. */
  static forFeature(
    aggregates: AggregateClass<AggregateRoot>[],
    options: OrdinalFeatureOptions = {},
  ): DynamicModule {
    const feature = EventSourcingModule.forFeature(aggregates, options.upcasters ?? []);
    if (!options.migrations?.length) return feature;
    // A token of its own per call, so two features' sets are two providers.
    const migrations: Provider = {
      provide: Symbol('ordinal:feature-migrations'),
      useValue: new MigrationSet(options.migrations),
    };
    return { ...feature, providers: [...(feature.providers ?? []), migrations] };
  }
}
