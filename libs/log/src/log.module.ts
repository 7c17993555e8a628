import { SegmentKeeper } from './segments/segment-keeper.service.js';
import { ArchivedSegments } from './archive/archived-segments.service.js';
import { SegmentArchiver } from './archive/segment-archiver.service.js';
import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import {
  LOG_MODULE_OPTIONS,
  LOG_RAW_OPTIONS,
  LogConfigurableModule,
} from './log.module-definition.js';
import {
  resolveLogOptions,
  type LogModuleOptions,
  type ResolvedLogOptions,
} from './log-options.js';
import { LogWriter } from './writer/log-writer.service.js';
import { LogReader } from './reader/log-reader.service.js';
import { TenantSessions } from './reader/tenant-sessions.js';
import { LogLifecycle } from './log-lifecycle.service.js';
import { LiveRouter } from './router/live-router.service.js';
import { LogWatermark } from './watermark/log-watermark.service.js';
import { LogImporter } from './import/log-importer.service.js';
import { LogScavenger } from './scavenge/log-scavenger.service.js';
import { PersonalData } from './personal/personal-data.service.js';
import { PersonalDataRedactor } from './personal/personal-data-redactor.service.js';
import { SubjectErasure } from './personal/subject-erasure.service.js';
import { ErasureWatch } from './personal/erasure-watch.service.js';
import { TenantDeletion } from './tenants/tenant-deletion.service.js';
import {
  ConsumerOwnership,
  OWNERSHIP_OPTIONS,
  ownershipTimings,
  type OwnershipOptions,
} from '@ordinal/ownership';

/**
 * The global-index log. Needs a TypeORM `DataSource` for PostgreSQL in the application
 * (OrdinalModule.forRoot sets one up); runs its own migrations at start.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: LOG_MODULE_OPTIONS,
      useFactory: (options: LogModuleOptions) => resolveLogOptions(options),
      inject: [LOG_RAW_OPTIONS],
    },
    LogWriter,
    SegmentKeeper,
    ArchivedSegments,
    SegmentArchiver,
    TenantSessions,
    LogReader,
    LogLifecycle,
    LiveRouter,
    LogWatermark,
    LogImporter,
    LogScavenger,
    PersonalData,
    PersonalDataRedactor,
    SubjectErasure,
    ErasureWatch,
    TenantDeletion,
    {
      provide: OWNERSHIP_OPTIONS,
      useFactory: (options: ResolvedLogOptions): OwnershipOptions => ({
        readOnly: options.role === 'replica-reader',
        timings: ownershipTimings(options.takeoverMs),
      }),
      inject: [LOG_MODULE_OPTIONS],
    },
    ConsumerOwnership,
  ],
  // The resolved options are exported too: subscriptions and the server read the ordering and gap settings.
  // ConsumerOwnership is for the sibling libraries (subscriptions, push interfaces), through @ordinal/ownership.
  exports: [
    LogWriter,
    SegmentKeeper,
    ArchivedSegments,
    SegmentArchiver,
    LogImporter,
    LogScavenger,
    PersonalData,
    PersonalDataRedactor,
    SubjectErasure,
    TenantDeletion,
    TenantSessions,
    LogReader,
    LogLifecycle,
    LiveRouter,
    LogWatermark,
    ConsumerOwnership,
    LOG_MODULE_OPTIONS,
  ],
})
export class LogModule extends LogConfigurableModule {}
