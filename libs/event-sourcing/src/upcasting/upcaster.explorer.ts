import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import 'reflect-metadata';
import { UPCASTER_METADATA } from '../event-sourcing.constants.js';
import { InvalidUpcasterError } from '../errors/index.js';
import type { EventUpcaster } from './upcaster-definition.js';
import type { UpcasterMetadata } from './upcaster.decorator.js';
import { UpcasterRegistry } from './upcaster-registry.service.js';

/** Finds `@Upcaster` providers through Nest's public DiscoveryService and registers them. */
@Injectable()
export class UpcasterExplorer implements OnModuleInit {
  private readonly logger = new Logger(UpcasterExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly registry: UpcasterRegistry,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { metatype } = wrapper;
      const instance: unknown = wrapper.instance;
      if (!metatype || typeof metatype !== 'function') continue;
      const metadata = Reflect.getMetadata(UPCASTER_METADATA, metatype) as
        UpcasterMetadata | undefined;
      if (!metadata) continue;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        // As @nestjs/schedule does for request scope (and for transient scope too): such an instance is not the one that would run.
        this.logger.warn(
          `Upcaster ${metatype.name} ('${metadata.eventType}' from version ${metadata.fromVersion}) is not registered: it is request- or transient-scoped; make it a singleton (the default scope)`,
        );
        continue;
      }
      if (!instance) continue;
      const upcaster = instance as Partial<EventUpcaster>;
      if (typeof upcaster.upcast !== 'function') {
        throw new InvalidUpcasterError(
          `${metatype.name} is an @Upcaster without an upcast(data, metadata) method`,
        );
      }
      this.registry.register({ ...metadata, upcast: upcaster.upcast.bind(instance) });
    }
  }
}
