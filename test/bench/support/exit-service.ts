/**
 * A user's service that must exit by itself after `app.close()`: the exit test runs it as its
 * own process. It imports OrdinalModule (log, aggregates, a projection, a subscription, the
 * CQRS EventBus) and, with AMQP_URL set, AmqpModule (an input queue and a replayable push
 * interface). It saves an aggregate, appends through the LogWriter (and, with AMQP, publishes
 * one message into the input queue), waits until the projection, the subscription (and the
 * interface) have passed every event (unless CLOSE_AT_ONCE=1: then while they may still be at work), calls `app.close()` and then does nothing: no
 * `process.exit`. Whatever the libraries leave open keeps the process alive.
 *
 * Environment: DATABASE_URL; AMQP_URL (optional); QUEUE_PREFIX (names the input queue and the
 * interface, so runs do not share queues). Prints `closed` once `app.close()` resolved.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { AmqpConnection, AmqpModule, InputConsumer, PushInterfaces } from '@ordinal/amqp';
import {
  Aggregate,
  AggregateRepository,
  AggregateRoot,
  DomainEvent,
  EventHandler,
  InjectAggregateRepository,
  LogWriter,
  OrdinalModule,
  Projection,
  ProjectionsService,
  SubscriptionsService,
  type ProjectionContext,
} from '@ordinal/nestjs';

const env = process.env;
const url = env.DATABASE_URL!;
const amqpUrl = env.AMQP_URL || undefined;
const prefix = env.QUEUE_PREFIX ?? `exit-${process.pid}`;
const deadline = 30_000;

@DomainEvent('LampSwitched')
class LampSwitched {
  constructor(readonly on: boolean) {}
}

@Aggregate({ events: [LampSwitched] })
class Lamp extends AggregateRoot {
  on = false;
  toggle(): void {
    this.apply(new LampSwitched(!this.on));
  }
  onLampSwitched(event: LampSwitched): void {
    this.on = event.on;
  }
}

class CreateLampLog1767225600200 implements MigrationInterface {
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE lamp_log (index bigint PRIMARY KEY, type text NOT NULL)');
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE lamp_log');
  }
}

@Projection('lamp-log')
@Injectable()
class LampLogProjection {
  @EventHandler(LampSwitched)
  async onSwitched(_event: LampSwitched, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.query('INSERT INTO lamp_log (index, type) VALUES ($1, $2)', [
      ctx.index,
      ctx.message.messageType,
    ]);
  }
}

@Injectable()
class Lamps {
  constructor(@InjectAggregateRepository(Lamp) readonly repository: AggregateRepository<Lamp>) {}
}

@Module({
  imports: [
    OrdinalModule.forRoot({
      url,
      typeorm: { extra: { max: 4, application_name: `exit-service-${process.pid}` } },
      migrations: [CreateLampLog1767225600200],
      log: { takeoverMs: 2000 },
      subscriptions: { retryInitialMs: 50, retryMaxMs: 500, idlePollMs: 50 },
    }),
    OrdinalModule.forFeature([Lamp]),
    ...(amqpUrl
      ? [
          AmqpModule.forRoot({
            url: amqpUrl,
            connectionName: prefix,
            inputQueue: `${prefix}.input`,
            interfaces: [{ name: `${prefix}.push`, type: 'replayable', ackBatch: 1 }],
            retryInitialMs: 50,
            retryMaxMs: 500,
          }),
        ]
      : []),
  ],
  providers: [LampLogProjection, Lamps],
})
class ExitServiceModule {}

/** Resolves once `check` holds; rejects after the deadline with `what`. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + deadline;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const app = await NestFactory.createApplicationContext(ExitServiceModule, {
  logger: ['warn', 'error'],
});
await app.init();

const seen: number[] = [];
app.get(SubscriptionsService).subscribe({
  name: 'lamp-audit',
  stream: '$all',
  handle: (_message, ctx) => void seen.push(ctx.index),
});

const lamp = app.get(Lamps).repository.create(`lamp-${process.pid}`);
lamp.toggle();
lamp.toggle();
await app.get(Lamps).repository.save(lamp);
const appended = await app
  .get(LogWriter)
  .append({ messages: [{ messageType: 'Noted', body: { by: 'exit-service' } }] });
let head = Math.max(...appended.entries.map((e) => (e.status === 'duplicate' ? 0 : e.message.id)));

if (amqpUrl) {
  // One message through the input queue once it is consumed: the consumer appends it and acknowledges.
  await until('the input queue to be consumed', () => app.get(InputConsumer).stats().consuming);
  const channel = await app.get(AmqpConnection).connection.createConfirmChannel();
  channel.publish('', `${prefix}.input`, Buffer.from(JSON.stringify({ via: 'amqp' })), {
    headers: { messageType: 'Arrived' },
  });
  await channel.waitForConfirms();
  await channel.close();
  await until(
    'the AMQP input to be appended',
    () => app.get(InputConsumer).stats().stored === 1 && seen.length >= 4,
  );
  head = Math.max(head, ...seen);
  await until('the push interface to publish every message', () => {
    const statuses = app.get(PushInterfaces).statuses();
    return statuses.length === 1 && statuses.every((s) => s.position >= head);
  });
}

if (env.CLOSE_AT_ONCE !== '1') {
  await app.get(ProjectionsService).waitFor(LampLogProjection, head, deadline);
  await app.get(SubscriptionsService).waitFor('lamp-audit', head, deadline);
}
await app.close();
console.log('closed');
