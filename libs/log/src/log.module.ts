import { Module } from '@nestjs/common';
import { LOG_MODULE_OPTIONS, LogConfigurableModule } from './log.module-definition.js';
import { LogWriter } from './writer/log-writer.service.js';
import { LogReader } from './reader/log-reader.service.js';
import { LogLifecycle } from './log-lifecycle.service.js';
import { LiveRouter } from './router/live-router.service.js';
import { LogWatermark } from './watermark/log-watermark.service.js';
import { ConsumerOwnership } from './ownership/consumer-ownership.service.js';

/**
 * The global-index log. Needs a TypeORM `DataSource` for PostgreSQL in the application
 * (TypeOrmModule.forRoot); runs its own migrations at start.
 */
@Module({
  providers: [LogWriter, LogReader, LogLifecycle, LiveRouter, LogWatermark, ConsumerOwnership],
  // The options are exported too: subscriptions and the server read the ordering and gap settings.
  exports: [LogWriter, LogReader, LogLifecycle, LiveRouter, LogWatermark, ConsumerOwnership, LOG_MODULE_OPTIONS],
})
export class LogModule extends LogConfigurableModule {}
