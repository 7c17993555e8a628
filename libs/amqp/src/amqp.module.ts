import { Module } from '@nestjs/common';
import { AmqpConfigurableModule } from './amqp.module-definition.js';
import { AmqpConnection } from './connection/amqp-connection.service.js';
import { InputConsumer } from './input/input-consumer.service.js';
import { BookmarkStore } from './bookmarks/bookmark-store.service.js';
import { PushInterfaces } from './interfaces/push-interfaces.service.js';
import { AmqpLifecycle } from './amqp-lifecycle.service.js';

/**
 * RabbitMQ for Ordinal: the input queue (I4) and push interfaces (P1–P4) over one
 * self-healing connection. Needs the global LogModule and a TypeORM DataSource; runs its
 * own migration (the bookmark table) at start.
 */
@Module({
  providers: [AmqpConnection, InputConsumer, BookmarkStore, PushInterfaces, AmqpLifecycle],
  exports: [AmqpConnection, InputConsumer, PushInterfaces, BookmarkStore],
})
export class AmqpModule extends AmqpConfigurableModule {}
