import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { EventBus } from '@nestjs/cqrs';
import { EVENT_SOURCING_OPTIONS } from './event-sourcing.constants.js';
import {
  EVENT_SOURCING_RAW_OPTIONS,
  EventSourcingConfigurableModule,
} from './event-sourcing.module-definition.js';
import {
  resolveEventSourcingOptions,
  type EventSourcingOptions,
  type ResolvedEventSourcingOptions,
} from './event-sourcing-options.js';
import { EventSourcingLifecycle } from './event-sourcing-lifecycle.service.js';
import { StreamStore } from './streams/stream-store.service.js';
import { StreamMetadataStore } from './streams/stream-metadata.service.js';
import { UpcasterRegistry } from './upcasting/upcaster-registry.service.js';
import { UpcasterExplorer } from './upcasting/upcaster.explorer.js';
import { AggregateRepository, type AggregateClass } from './aggregates/aggregate-repository.js';
import { aggregateRepositoryToken } from './aggregates/aggregate-repository.token.js';
import type { AggregateRoot } from './aggregates/aggregate-root.js';

/**
 * Aggregates on the log. `forRoot`/`forRootAsync` (once, global by default) provides the
 * `StreamStore`, the upcaster registry and the snapshots migration; it needs a TypeORM
 * DataSource and the global `LogModule` (OrdinalModule.forRoot sets all of it up).
 * `forFeature([Order])` provides `AggregateRepository<Order>`, injected with
 * `@InjectAggregateRepository(Order)`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: EVENT_SOURCING_OPTIONS,
      useFactory: (options: EventSourcingOptions) => resolveEventSourcingOptions(options),
      inject: [EVENT_SOURCING_RAW_OPTIONS],
    },
    StreamStore,
    StreamMetadataStore,
    UpcasterRegistry,
    UpcasterExplorer,
    EventSourcingLifecycle,
  ],
  exports: [EVENT_SOURCING_OPTIONS, StreamStore, StreamMetadataStore, UpcasterRegistry],
})
export class EventSourcingModule extends EventSourcingConfigurableModule {
  /**
   * Repositories of the given aggregate classes (each decorated with `@Aggregate`). Upcaster
   * classes listed in `upcasters` become providers of this module and are discovered.
   */
  static forFeature(
    aggregates: AggregateClass<AggregateRoot>[],
    upcasters: Provider[] = [],
  ): DynamicModule {
    const repositories: Provider[] = aggregates.map((aggregate) => ({
      provide: aggregateRepositoryToken(aggregate),
      useFactory: (
        store: StreamStore,
        registry: UpcasterRegistry,
        options: ResolvedEventSourcingOptions,
        eventBus?: EventBus,
      ) =>
        new AggregateRepository(
          aggregate,
          store,
          registry,
          options.publishEvents ? (eventBus ?? null) : null,
        ),
      inject: [
        StreamStore,
        UpcasterRegistry,
        EVENT_SOURCING_OPTIONS,
        { token: EventBus, optional: true },
      ],
    }));
    return {
      module: EventSourcingFeatureModule,
      providers: [...repositories, ...upcasters],
      exports: repositories,
    };
  }
}

/** The module `forFeature` returns (a separate class so each feature is its own module). */
@Module({})
export class EventSourcingFeatureModule {}
