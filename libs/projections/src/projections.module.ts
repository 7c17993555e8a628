import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ProjectionsExplorer } from './explorer/projections.explorer.js';
import { ProjectionsService } from './projections.service.js';
import { ProjectionVersionsService } from './versions/projection-versions.service.js';

/**
 * `@Projection` read models, discovered in every module. It has no options of its own: it
 * needs the global `SubscriptionsModule` (batch size, polls, retries) and `LogModule`, which
 * `OrdinalModule.forRoot` sets up together with this module.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [ProjectionsExplorer, ProjectionsService, ProjectionVersionsService],
  exports: [ProjectionsService, ProjectionVersionsService],
})
export class ProjectionsModule {}
