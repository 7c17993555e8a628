import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { runMigrations } from '@ordinal/pg';
import { DataSource } from 'typeorm';
import { SUBSCRIPTIONS_MIGRATIONS } from './migrations/index.js';
import { SUBSCRIPTIONS_OPTIONS } from './subscriptions.module-definition.js';
import type { ResolvedSubscriptionsOptions } from './subscriptions-options.js';

/** Runs the checkpoints migration at start (under the log's migration lock, in one transaction). */
@Injectable()
export class SubscriptionsLifecycle implements OnModuleInit {
  private readonly logger = new Logger(SubscriptionsLifecycle.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(SUBSCRIPTIONS_OPTIONS) private readonly options: ResolvedSubscriptionsOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.options.migrate) return;
    const applied = await runMigrations(this.dataSource, SUBSCRIPTIONS_MIGRATIONS);
    if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
  }
}
