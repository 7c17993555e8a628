import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { hostname } from 'node:os';
import { DataSource } from 'typeorm';
import { LOG_MODULE_OPTIONS } from './log.module-definition.js';
import { resolveLogOptions, type LogModuleOptions } from './log-options.js';
import { LOG_MIGRATIONS } from './migrations/index.js';
import { runMigrations } from './schema/run-migrations.js';
import { alignPositions, execute, latestHashes } from './sql/index.js';
import { LogWriter } from './writer/log-writer.service.js';
import { START_MARKER_TYPE, SYSTEM_USER } from './log.constants.js';
import type { StoredMessage } from './message.js';

/**
 * Brings the log up in order: migrations, then the duplicate window's memory (the latest
 * hashes, read before anything new is written), then a StartMarker (L6) once every module
 * is initialised, so a healthy server always has its marker in the log.
 */
@Injectable()
export class LogLifecycle implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(LogLifecycle.name);
  private marker: StoredMessage | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly writer: LogWriter,
    @Inject(LOG_MODULE_OPTIONS) private readonly rawOptions: LogModuleOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    const options = resolveLogOptions(this.rawOptions);
    if (options.migrate) {
      const applied = await runMigrations(this.dataSource, LOG_MIGRATIONS);
      if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
    }
    await execute(this.dataSource.manager, alignPositions(options.ordering));
    if (options.duplicateWindow > 0) {
      const rows = await execute<{ content_hash: string }>(this.dataSource.manager, latestHashes(options.duplicateWindow));
      this.writer.window.load(rows.map((r) => r.content_hash));
      this.logger.log(`Duplicate window loaded ${rows.length} hashes (open for the next ${options.duplicateWindow} messages)`);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    const options = resolveLogOptions(this.rawOptions);
    if (!options.startMarker) return;
    const result = await this.writer.append({
      skipDuplicateWindow: true,
      messages: [
        {
          messageType: START_MARKER_TYPE,
          userId: SYSTEM_USER,
          body: { host: hostname(), pid: process.pid, startedAt: new Date().toISOString(), ...options.startMarkerBody },
        },
      ],
    });
    const entry = result.entries[0];
    if (entry.status === 'created') {
      this.marker = entry.message;
      this.logger.log(`StartMarker written at index ${entry.message.id}`);
    }
  }

  /** The StartMarker this process wrote, once written. */
  get startMarker(): StoredMessage | null {
    return this.marker;
  }
}
