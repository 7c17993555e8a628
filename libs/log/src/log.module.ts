import { Module } from '@nestjs/common';
import { LogConfigurableModule } from './log.module-definition.js';
import { LogWriter } from './writer/log-writer.service.js';
import { LogReader } from './reader/log-reader.service.js';
import { LogLifecycle } from './log-lifecycle.service.js';

/**
 * The global-index log. Needs a TypeORM `DataSource` for PostgreSQL in the application
 * (TypeOrmModule.forRoot); runs its own migrations at start.
 */
@Module({
  providers: [LogWriter, LogReader, LogLifecycle],
  exports: [LogWriter, LogReader, LogLifecycle],
})
export class LogModule extends LogConfigurableModule {}
