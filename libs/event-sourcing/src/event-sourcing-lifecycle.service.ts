import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execute, runMigrations } from '@ordinal/pg';
import { SubjectErasure } from '@ordinal/log';
import { deleteErasedSnapshots } from './sql/index.js';
import { EVENT_SOURCING_OPTIONS } from './event-sourcing.constants.js';
import type { ResolvedEventSourcingOptions } from './event-sourcing-options.js';
import { EVENT_SOURCING_MIGRATIONS } from './migrations/index.js';

/**
 * Runs the snapshots migration at start (under the log's migration lock, in one transaction),
 * and deletes the snapshots of an erased subject's streams after each erasure.
 */
@Injectable()
export class EventSourcingLifecycle implements OnModuleInit {
  private readonly logger = new Logger(EventSourcingLifecycle.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(EVENT_SOURCING_OPTIONS) private readonly options: ResolvedEventSourcingOptions,
    private readonly erasure: SubjectErasure,
  ) {}

  async onModuleInit(): Promise<void> {
    this.erasure.onErased(async (subject) => {
      await execute(this.dataSource.manager, deleteErasedSnapshots(subject));
    });
    if (!this.options.migrate) return;
    const applied = await runMigrations(this.dataSource, EVENT_SOURCING_MIGRATIONS);
    if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
  }
}
