import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LogLifecycle } from '@ordinal/log';
import { runMigrations } from '@ordinal/pg';
import { AMQP_MODULE_OPTIONS } from './amqp.module-definition.js';
import type { ResolvedAmqpOptions } from './amqp-options.js';
import { AMQP_MIGRATIONS } from './migrations/index.js';
import { AmqpConnection } from './connection/amqp-connection.service.js';
import { InputConsumer } from './input/input-consumer.service.js';
import { PushInterfaces } from './interfaces/push-interfaces.service.js';

/**
 * Brings AMQP up in order: the bookmark table's migration at init, then, once the
 * application has started (the log's StartMarker written when it writes one, so input never
 * lands before it; the router ready), the connection in the background with the input
 * consumer and the interfaces riding on it.
 */
@Injectable()
export class AmqpLifecycle implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AmqpLifecycle.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly connection: AmqpConnection,
    private readonly input: InputConsumer,
    private readonly interfaces: PushInterfaces,
    private readonly log: LogLifecycle,
    @Inject(AMQP_MODULE_OPTIONS) private readonly options: ResolvedAmqpOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.options.migrate) return;
    const applied = await runMigrations(this.dataSource, AMQP_MIGRATIONS);
    if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
  }

  private stopped = false;

  onApplicationBootstrap(): void {
    void this.log.whenStarted().then(() => {
      if (this.stopped) return;
      this.input.start();
      this.interfaces.start();
      this.connection.start();
    });
  }

  onApplicationShutdown(): void {
    this.stopped = true;
  }
}
