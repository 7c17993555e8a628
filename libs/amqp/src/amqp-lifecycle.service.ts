import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { runMigrations } from '@ordinal/log';
import { AMQP_MODULE_OPTIONS } from './amqp.module-definition.js';
import { resolveAmqpOptions, type AmqpModuleOptions } from './amqp-options.js';
import { AMQP_MIGRATIONS } from './migrations/index.js';
import { AmqpConnection } from './connection/amqp-connection.service.js';
import { InputConsumer } from './input/input-consumer.service.js';
import { PushInterfaces } from './interfaces/push-interfaces.service.js';

/**
 * Brings AMQP up in order: the bookmark table's migration at init, then, once the
 * application is bootstrapped (the log's StartMarker written, the router ready), the
 * connection in the background with the input consumer and the interfaces riding on it.
 */
@Injectable()
export class AmqpLifecycle implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(AmqpLifecycle.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly connection: AmqpConnection,
    private readonly input: InputConsumer,
    private readonly interfaces: PushInterfaces,
    @Inject(AMQP_MODULE_OPTIONS) private readonly options: AmqpModuleOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!resolveAmqpOptions(this.options).migrate) return;
    const applied = await runMigrations(this.dataSource, AMQP_MIGRATIONS);
    if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
  }

  onApplicationBootstrap(): void {
    this.input.start();
    this.interfaces.start();
    this.connection.start();
  }
}
