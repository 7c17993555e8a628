import type { INestApplicationContext } from '@nestjs/common';
import type { ConsumeMessage } from 'amqplib';
import pg from 'pg';
import { LogWatermark } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import {
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '@ordinal/test-support/amqp-broker';
import { startAmqpContext, type AmqpContext } from '@ordinal/test-support/amqp-context';
import { startLogContext } from '@ordinal/test-support/log-context';
import { waitFor } from '@ordinal/test-support/test-server';

const indexOf = (msg: ConsumeMessage) => Number(msg.properties.headers!.index);
const uuidOf = (msg: ConsumeMessage) => String(msg.properties.headers!.serverCorrelationUuid);

/**
 * A replayable interface saves its bookmark while a late arrival is already claimed (another
 * process's watermark re-scan stamped `arrived_at`) but not yet handed to it by the router,
 * then stops. The run after the restart must still publish it: resuming its watch from the
 * bookmark's save time, after the claim, lost it.
 */
describe('A replayable interface resuming from a bookmark saved after an arrival was claimed, before it was published', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let context: AmqpContext | null = null;
  let other: INestApplicationContext | null = null;
  let sink: Collector | null = null;
  const clients: pg.Client[] = [];
  const name = uniqueName('late-resume');

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
  });
  afterAll(async () => {
    await sink?.stop();
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await context?.close();
    await other?.close();
    await broker?.deleteQueues(`${name}.sink`, `${name}.ack`);
    await broker?.close();
    await db?.drop();
  });

  /**
   * The server: concurrent mode, a hole abandoned after 100 ms (no exact release), and no
   * periodic re-scan or router late check in the test's time (the router still looks once
   * when a feed starts watching a position).
   */
  const start = () =>
    startAmqpContext(
      db.url,
      {
        inputQueue: false,
        interfaces: [{ name, type: 'replayable', ackBatch: 1 }],
        connectionName: uniqueName('ordinal-late-resume'),
      },
      {
        startMarker: false,
        ordering: 'concurrent',
        gapTimeoutMs: 100,
        exactRelease: false,
        lateRescanMs: 600_000,
      },
    );

  /** A transaction that drew a position inside its INSERT and holds it open. */
  const hold = async () => {
    const client = new pg.Client({ connectionString: db.url, application_name: 'held-writer' });
    await client.connect();
    clients.push(client);
    await client.query('BEGIN');
    await client.query('SELECT pg_current_xact_id()');
    const { rows } = await client.query<{ index: number }>(
      `INSERT INTO messages (index, message_type, body, content_hash)
       VALUES (nextval('messages_index_seq'), 'Held', '{}'::jsonb, 'h') RETURNING index::int AS index`,
    );
    return { position: rows[0].index, commit: () => client.query('COMMIT') };
  };
  const append = async (messageType: string) => {
    const [entry] = (await context!.writer.append({ messages: [{ messageType, body: {} }] }))
      .entries;
    if (entry.status !== 'created') throw new Error(`append was ${entry.status}`);
    return entry.message.id;
  };
  /** Waits for `index` in the sink and acknowledges it; resolves once the bookmark is there. */
  const deliverAndAck = async (index: number) => {
    const msg = await waitFor(
      () => sink!.messages.find((m) => indexOf(m) === index),
      10_000,
      `the delivery of ${index}`,
    );
    await broker.publish(`${name}.ack`, { index, serverCorrelationUuid: uuidOf(msg) });
    await waitFor(
      async () =>
        Number(
          (
            await db.query<{ position: string }>(
              'SELECT position FROM interface_bookmarks WHERE name = $1',
              [name],
            )
          )[0]?.position,
        ) === index,
      10_000,
      `bookmark ${index}`,
    );
  };

  it('publishes the arrival after the restart, marked late', async () => {
    // Given an interface whose feed passed a hole abandoned below a message it published
    context = await start();
    sink = await collect(broker, `${name}.sink`);
    const held = await hold();
    const above = await append('Above');
    // And whose consumer acknowledged that message (bookmark saved before the arrival)
    await deliverAndAck(above);
    // When the held row commits and another process's re-scan claims it as arrived
    await held.commit();
    other = await startLogContext(db.url, { ordering: 'concurrent', lateRescanMs: 600_000 });
    const rescanning = other.get(LogWatermark);
    await waitFor(
      async () => (await rescanning.rescanLate()).includes(held.position),
      5000,
      'the other process to claim the arrival',
    );
    // And the interface saves its bookmark after the claim, without having published it
    const last = await append('Last');
    await deliverAndAck(last);
    const [saved] = await db.query<{ after: boolean }>(
      `SELECT b.updated_at > s.arrived_at AS after FROM interface_bookmarks b, log_skipped s
       WHERE b.name = $1 AND s.position = $2`,
      [name, held.position],
    );
    expect(saved.after).toBe(true);
    expect(sink.messages.map(indexOf)).toEqual([above, last]);
    // And the server stops
    await context.close();
    context = null;
    // Then, started again, the interface publishes the arrival, marked late, and nothing else
    context = await start();
    const late = await waitFor(
      () => sink!.messages.find((m) => indexOf(m) === held.position),
      10_000,
      'the arrival to be published after the restart',
    );
    expect(late.properties.headers).toMatchObject({ messageType: 'Held', late: true });
    expect(sink.messages.map(indexOf)).toEqual([above, last, held.position]);
  });
});
