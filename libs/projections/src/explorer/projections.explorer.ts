import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { UpcasterRegistry } from '@ordinal/event-sourcing';
import { SubscriptionsService } from '@ordinal/subscriptions';
import type { EntityManager } from 'typeorm';
import 'reflect-metadata';
import { PROJECTION_METADATA } from '../projections.constants.js';
import type { ProjectionMetadata } from '../projection-options.js';
import { defineProjection, type ProjectionDefinition } from './projection-definition.js';
import { ProjectionDispatcher } from './projection-dispatcher.js';
import { projectionPartitions } from './projection-partitions.js';

/**
 * Finds `@Projection` providers in every module through Nest's public DiscoveryService and
 * MetadataScanner, and registers each as a subscription of kind `projection`; they start at
 * application bootstrap.
 */
@Injectable()
export class ProjectionsExplorer implements OnModuleInit {
  private readonly logger = new Logger(ProjectionsExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly subscriptions: SubscriptionsService,
    @Optional() @Inject(UpcasterRegistry) private readonly upcasters?: UpcasterRegistry,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { metatype } = wrapper;
      const instance: unknown = wrapper.instance;
      if (!metatype || typeof metatype !== 'function') continue;
      const metadata = Reflect.getMetadata(PROJECTION_METADATA, metatype) as
        ProjectionMetadata | undefined;
      if (!metadata) continue;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        // As @nestjs/schedule does for request scope (and for transient scope too): such an instance is not the one that would run.
        this.logger.warn(
          `Projection '${metadata.name}' (${metatype.name}) is not registered: it is request- or transient-scoped; make it a singleton (the default scope)`,
        );
        continue;
      }
      if (!instance) continue;
      const methods = this.scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object);
      const definition = defineProjection(metadata, instance, methods, (message) =>
        this.logger.warn(message),
      );
      this.register(definition);
    }
  }

  private register(definition: ProjectionDefinition): void {
    const dispatcher = new ProjectionDispatcher(definition, this.upcasters ?? null);
    const { options } = definition;
    const partitions = projectionPartitions(
      definition.name,
      options.partitions,
      options.partitionBy,
    );
    this.subscriptions.subscribeGroup(
      definition.name,
      partitions.names.map((name, i) => ({
        name,
        kind: 'projection',
        stream: options.stream ?? { types: dispatcher.types },
        batchSize: options.batchSize,
        onError: options.onError,
        accepts: partitions.accepts[i],
        handle: (message, ctx) => dispatcher.dispatch(message, ctx),
        reset: (manager) => this.reset(definition, manager),
      })),
    );
    const split = partitions.names.length > 1 ? ` in ${partitions.names.length} partitions` : '';
    this.logger.log(
      `Projection '${definition.name}' handles ${dispatcher.types.join(', ')}${split}`,
    );
  }

  /** A rebuild clears the declared read models and calls the projection's own `reset(manager)`. */
  private async reset(definition: ProjectionDefinition, manager: EntityManager): Promise<void> {
    for (const entity of definition.options.readModels ?? []) {
      await manager.createQueryBuilder().delete().from(entity).execute();
    }
    const hook = (
      definition.instance as { reset?: (manager: EntityManager) => Promise<void> | void }
    ).reset;
    if (typeof hook === 'function') await hook.call(definition.instance, manager);
  }
}
