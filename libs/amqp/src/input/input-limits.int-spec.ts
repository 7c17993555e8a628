import 'reflect-metadata';
import { Module, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LogModule } from '@ordinal/log';
import { JSON_LIMITS } from '@ordinal/pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import {
  brokerUrl,
  connectTestBroker,
  uniqueName,
  type TestBroker,
} from '@ordinal/test-support/amqp-broker';
import { waitFor } from '@ordinal/test-support/test-server';
import { AmqpModule } from '../amqp.module.js';
import { InputConsumer } from './input-consumer.service.js';

/** Every line the context logs, debug included. */
class AllLogs implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', message: String(message) });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  error(message: unknown): void {
    this.lines.push({ level: 'error', message: String(message) });
  }
  debug(message: unknown): void {
    this.lines.push({ level: 'debug', message: String(message) });
  }
  verbose(): void {}
  matching(pattern: RegExp, level: string): string[] {
    return this.lines
      .filter((l) => l.level === level && pattern.test(l.message))
      .map((l) => l.message);
  }
}

describe('AMQP input: the same limits and JSON rules as REST (H1, H2, I4)', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let app: INestApplicationContext;
  const logs = new AllLogs();
  const queue = uniqueName('input-limits');
  const rejected = `${queue}.rejected`;

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    @Module({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: db.url,
          entities: [],
          synchronize: false,
          extra: { max: 4, application_name: 'ordinal' },
        }),
        LogModule.forRoot({ isGlobal: true, duplicateWindow: 100, livePollMs: 200 }),
        AmqpModule.forRoot({
          url: brokerUrl(),
          inputQueue: queue,
          inputBodyLimitBytes: 4096,
          retryInitialMs: 100,
          retryMaxMs: 1000,
          connectionName: uniqueName('ordinal-input-limits'),
        }),
      ],
    })
    class SuiteModule {}
    app = await NestFactory.createApplicationContext(SuiteModule, { logger: logs });
    await app.init();
    await waitFor(async () => (await broker.consumers(queue)) === 1, 10_000, 'the input consumer');
  });
  afterAll(async () => {
    await app?.close();
    await broker?.deleteQueues(queue, rejected);
    await broker?.close();
    await db?.drop();
  });

  const input = () => app.get(InputConsumer).stats();
  const rows = (type: string) =>
    db.query<{ body: unknown; body_text: string }>(
      'SELECT body, body::text AS body_text FROM messages WHERE message_type = $1 ORDER BY index',
      [type],
    );

  it.each([
    [
      'a body over the size limit',
      () => Buffer.from(JSON.stringify({ s: 'x'.repeat(5000) })),
      /over the limit of 4096/,
    ],
    [
      'a body nested deeper than the limit',
      () => Buffer.from('['.repeat(2000) + ']'.repeat(2000)),
      new RegExp(`nested deeper than ${JSON_LIMITS.maxDepth} levels`),
    ],
    [
      'a body that is not UTF-8',
      () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      /not valid UTF-8/,
    ],
    [
      'an integer JavaScript cannot keep',
      () => Buffer.from('{"n":9007199254740993}'),
      /content\.n is the number 9007199254740993/,
    ],
    [
      'a decimal JavaScript would round',
      () => Buffer.from('{"a":[1.00000000000000000001]}'),
      /content\.a\.0 is the number 1\.00000000000000000001/,
    ],
    ['an unpaired surrogate', () => Buffer.from('{"s":"\\ud800"}'), /content\.s has/],
  ])('dead-letters %s, without requeueing it', async (_name, body, reason) => {
    // Given the counters before
    const before = input();
    const dead = await broker.count(rejected);
    // When the delivery arrives
    await broker.publish(queue, body(), { messageType: 'Refused' });
    // Then it lands in the dead-letter queue, once, with the reason logged
    await waitFor(
      async () => (await broker.count(rejected)) === dead + 1,
      10_000,
      'the dead-lettered delivery',
    );
    expect(input()).toMatchObject({
      rejected: before.rejected + 1,
      requeued: before.requeued,
      stored: before.stored,
    });
    expect(logs.matching(reason, 'warn').length).toBeGreaterThan(0);
    expect(await rows('Refused')).toHaveLength(0);
  });

  it('stores __proto__ and constructor as ordinary keys, as REST does', async () => {
    await broker.publish(
      queue,
      Buffer.from('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}'),
      { messageType: 'Odd' },
    );
    const [row] = await waitFor(
      async () => {
        const r = await rows('Odd');
        return r.length === 1 ? r : null;
      },
      10_000,
      'the stored message',
    );
    expect(row.body_text).toBe(
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('acknowledges a duplicate without counting it stored, logs it at debug and counts it', async () => {
    // Given a body stored once
    const before = input();
    await broker.publish(queue, { order: 'dup-1' }, { messageType: 'Dup' });
    await waitFor(() => input().stored === before.stored + 1, 10_000, 'the first copy stored');
    // When the same body comes again, and a message repeats an idempotency key
    await broker.publish(queue, { order: 'dup-1' }, { messageType: 'Dup' });
    await broker.publish(
      queue,
      { order: 'key-1' },
      { messageType: 'Dup', idempotencyKey: 'amqp-key-1' },
    );
    await broker.publish(
      queue,
      { order: 'key-1-again' },
      { messageType: 'Dup', idempotencyKey: 'amqp-key-1' },
    );
    // Then the copies are acknowledged, counted as duplicates and repeats, not as stored
    await waitFor(
      () => input().duplicates === before.duplicates + 1 && input().repeats === before.repeats + 1,
      10_000,
      'the duplicate and the repeat',
    );
    expect(input().stored).toBe(before.stored + 2);
    expect(await rows('Dup')).toHaveLength(2);
    await waitFor(
      async () => (await broker.count(queue)) === 0 && input().inFlight === 0,
      5000,
      'everything acknowledged',
    );
    // And each is logged at debug, naming the delivery
    expect(
      logs.matching(
        /AMQP input delivery \d+ not stored: its body .* is inside the duplicate window/,
        'debug',
      ),
    ).toHaveLength(1);
    expect(
      logs.matching(
        /AMQP input delivery \d+ not stored: idempotency key 'amqp-key-1' was stored before at index \d+/,
        'debug',
      ),
    ).toHaveLength(1);
  });
});
