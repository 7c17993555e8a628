import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SubscriptionsModule, type SubscriptionsModuleOptions } from '@ordinal/subscriptions';
import { ProjectionsExplorer } from './explorer/projections.explorer.js';
import { ProjectionsService } from './projections.service.js';

/** Options of `ProjectionsModule.forRoot`. */
export interface ProjectionsModuleOptions {
  /** Options of the SubscriptionsModule this module sets up (batch size, polls, retries). */
  subscriptions?: SubscriptionsModuleOptions;
}

/**
 * `@Projection` read models (S7-S9), discovered in every module. Import once, beside
 * `EventStoreModule.forRoot(...)`; it sets up `SubscriptionsModule` too (global), so domain
 * code can also `subscribe` from code and inject `ProjectionsService`.
 */
@Module({})
export class ProjectionsModule {
  static forRoot(options: ProjectionsModuleOptions = {}): DynamicModule {
    return {
      module: ProjectionsModule,
      global: true,
      imports: [DiscoveryModule, SubscriptionsModule.forRoot({ ...options.subscriptions, isGlobal: true })],
      providers: [ProjectionsExplorer, ProjectionsService],
      exports: [ProjectionsService, SubscriptionsModule],
    };
  }
}
