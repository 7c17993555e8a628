import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { connectTestBroker, uniqueName, type TestBroker } from '@ordinal/test-support/amqp-broker';
import { startAmqpContext, type AmqpContext } from '@ordinal/test-support/amqp-context';
import { waitFor } from '@ordinal/test-support/test-server';

describe('AMQP input queue (I4, G1, G6)', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let context: AmqpContext | null = null;
  const queue = uniqueName('input');
  const rejected = `${queue}.rejected`;

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    context = await startAmqpContext(db.url, {
      inputQueue: queue,
      connectionName: uniqueName('ordinal-input'),
    });
    await waitFor(async () => (await broker.consumers(queue)) === 1, 10_000, 'the input consumer');
  });
  afterAll(async () => {
    await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await context?.close();
    await broker?.deleteQueues(queue, rejected);
    await broker?.close();
    await db?.drop();
  });

  const stored = (type: string) =>
    db.query<{
      index: string;
      seq: number;
      user_id: string | null;
      metadata: unknown;
      idempotency_key: string | null;
    }>(
      `SELECT index, (body->>'seq')::int AS seq, user_id, metadata, idempotency_key FROM messages WHERE message_type = $1 ORDER BY index`,
      [type],
    );

  it('stores valid messages in order and dead-letters the invalid ones, naming each delivery', async () => {
    // Given 60 deliveries where every 5th has no messageType and every 7th (else) an unparsable body
    const expectedValid: number[] = [];
    let invalid = 0;
    for (let seq = 1; seq <= 60; seq++) {
      if (seq % 5 === 0) {
        invalid++;
        await broker.publish(queue, { seq }, { userId: 'u' });
      } else if (seq % 7 === 0) {
        invalid++;
        await broker.publish(queue, Buffer.from('{"seq": '), { messageType: 'Mixed' });
      } else {
        expectedValid.push(seq);
        await broker.publish(
          queue,
          { seq },
          {
            messageType: 'Mixed',
            userId: `customer-${seq % 3}`,
            metadata: JSON.stringify({ source: 'test' }),
            idempotencyKey: `mixed-${seq}`,
          },
        );
      }
    }

    // When the server has consumed them
    await waitFor(
      async () =>
        (await stored('Mixed')).length === expectedValid.length &&
        (await broker.count(rejected)) === invalid,
      15_000,
      'valid stored and invalid dead-lettered',
    );

    // Then the valid ones are in the log in publish order with their headers
    const rows = await stored('Mixed');
    expect(rows.map((r) => r.seq)).toEqual(expectedValid);
    expect(rows[0]).toMatchObject({
      user_id: 'customer-1',
      metadata: { source: 'test' },
      idempotency_key: 'mixed-1',
    });
    // And the broker holds exactly the invalid ones in the rejected queue, none left in the input queue
    expect(await broker.count(rejected)).toBe(invalid);
    await waitFor(async () => (await broker.count(queue)) === 0, 5000, 'an empty input queue');
    // And each rejection was logged as a warning naming the delivery
    expect(
      context!.logs.matching(/Rejecting AMQP input delivery \d+ .*no messageType header/, 'warn'),
    ).toHaveLength(12);
    expect(
      context!.logs.matching(/Rejecting AMQP input delivery \d+ .*not valid JSON/, 'warn'),
    ).toHaveLength(invalid - 12);
    expect(context!.input.stats()).toMatchObject({
      stored: expectedValid.length,
      rejected: invalid,
    });
  });

  it('dead-letters a rejected delivery with x-ordinal-error (code, message, time), its own headers and body kept, and acknowledges the original', async () => {
    // Given a delivery without a messageType, marked so it can be found among the dead letters
    const probe = uniqueName('probe');
    await broker.publish(queue, { probe }, { probe, userId: 'u-1' });
    // When the server has consumed it
    const channel = await broker.channel();
    try {
      let found: import('amqplib').GetMessage | null = null;
      // (the dead letters of the test before are taken out on the way)
      await waitFor(
        async () => {
          for (;;) {
            const msg = await channel.get(rejected, { noAck: true });
            if (msg === false) return false;
            if (msg.properties.headers?.probe === probe) {
              found = msg;
              return true;
            }
          }
        },
        15_000,
        'the dead letter',
      );
      const msg = found as unknown as import('amqplib').GetMessage;
      // Then the dead letter says why, in a header an operator reads without the server log
      expect(msg.properties.headers?.['x-ordinal-error']).toEqual({
        code: 'invalid_message',
        message: 'no messageType header',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
      });
      expect(msg.properties.headers).toMatchObject({
        probe,
        userId: 'u-1',
        'x-first-death-reason': 'rejected',
      });
      expect(JSON.parse(msg.content.toString('utf8'))).toEqual({ probe });
      // And the original left the input queue
      await waitFor(async () => (await broker.count(queue)) === 0, 5000, 'an empty input queue');
    } finally {
      await channel.close().catch(() => undefined);
    }
  });

  it('requeues with a back-off while the database is down and loses nothing', async () => {
    // Given the database refusing the server's connections
    await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await db.admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [db.name],
    );
    const before = context!.input.stats();

    // When 20 messages arrive during the outage
    for (let seq = 1; seq <= 20; seq++)
      await broker.publish(queue, { seq }, { messageType: 'DuringOutage' });
    await waitFor(
      () => context!.input.stats().requeued - before.requeued >= 40,
      15_000,
      'two rounds of requeues',
    );
    const outageStarted = Date.now();
    await waitFor(
      () => context!.input.stats().requeued - before.requeued >= 60,
      15_000,
      'a third round of requeues',
    );
    const roundMs = Date.now() - outageStarted;

    // Then the deliveries are requeued in rounds separated by a growing back-off, not in a tight loop
    expect(roundMs).toBeGreaterThanOrEqual(150);
    expect(context!.input.stats().stored).toBe(before.stored);

    // And when the database comes back, every message is stored exactly once (requeues may reorder them)
    await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    await waitFor(
      async () => (await stored('DuringOutage')).length === 20,
      20_000,
      'the 20 messages stored',
    );
    expect((await stored('DuringOutage')).map((r) => r.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    await waitFor(async () => (await broker.count(queue)) === 0, 5000, 'an empty input queue');
  });

  it('logs a clear error when the input queue exists without the dead-letter policy, and keeps running', async () => {
    // Given an input queue declared earlier with other arguments
    const legacy = uniqueName('legacy-input');
    const channel = await broker.channel();
    await channel.assertQueue(legacy, { durable: true });
    await channel.close();
    let other: AmqpContext | null = null;
    try {
      // When a server is started on it
      other = await startAmqpContext(db.url, {
        inputQueue: legacy,
        connectionName: uniqueName('ordinal-legacy'),
      });
      // Then it says what is wrong and how to fix it, without crashing
      await waitFor(
        () =>
          other!.logs.matching(
            /AMQP input is off: Queue '.*' exists with other arguments .* delete it/,
            'error',
          ).length > 0,
        10_000,
        'the mismatch error',
      );
      expect(other.connection.state).toBe('up');
    } finally {
      await other?.close();
      await broker.deleteQueues(legacy, `${legacy}.rejected`);
    }
  });
});
