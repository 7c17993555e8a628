import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { runMigrations } from '@ordinal/pg';
import { EVENT_SOURCING_OPTIONS } from './event-sourcing.constants.js';
import type { ResolvedEventSourcingOptions } from './event-sourcing-options.js';
import { EVENT_SOURCING_MIGRATIONS } from './migrations/index.js';

/** Runs the snapshots migration at start (under the log's migration lock, in one transaction). */
@Injectable()
export class EventSourcingLifecycle implements OnModuleInit {
  private readonly logger = new Logger(EventSourcingLifecycle.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(EVENT_SOURCING_OPTIONS) private readonly options: ResolvedEventSourcingOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.options.migrate) return;
    const applied = await runMigrations(this.dataSource, EVENT_SOURCING_MIGRATIONS);
    if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
  }
}
