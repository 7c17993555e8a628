import { Module } from '@nestjs/common';
import {
  AMQP_MODULE_OPTIONS,
  AMQP_RAW_OPTIONS,
  AmqpConfigurableModule,
} from './amqp.module-definition.js';
import { resolveAmqpOptions, type AmqpModuleOptions } from './amqp-options.js';
import { AmqpConnection } from './connection/amqp-connection.service.js';
import { InputConsumer } from './input/input-consumer.service.js';
import { DeadLetters } from './input/dead-letters.service.js';
import { BookmarkStore } from './bookmarks/bookmark-store.service.js';
import { PushInterfaces } from './interfaces/push-interfaces.service.js';
import { AmqpLifecycle } from './amqp-lifecycle.service.js';

/**
 * RabbitMQ for Ordinal: the input queue and push interfaces over one
 * self-healing connection. Needs the global LogModule and a TypeORM DataSource; runs its
 * own migration (the bookmark table) at start.
 */
@Module({
  providers: [
    {
      provide: AMQP_MODULE_OPTIONS,
      useFactory: (options: AmqpModuleOptions) => resolveAmqpOptions(options),
      inject: [AMQP_RAW_OPTIONS],
    },
    AmqpConnection,
    InputConsumer,
    DeadLetters,
    BookmarkStore,
    PushInterfaces,
    AmqpLifecycle,
  ],
  exports: [AmqpConnection, InputConsumer, DeadLetters, PushInterfaces, BookmarkStore],
})
export class AmqpModule extends AmqpConfigurableModule {}
