import type { ConsumeMessage } from 'amqplib';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import {
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '@ordinal/test-support/amqp-broker';
import { startAmqpContext, type AmqpContext } from '@ordinal/test-support/amqp-context';
import { waitFor } from '@ordinal/test-support/test-server';

const indexOf = (msg: ConsumeMessage) => Number(msg.properties.headers!.index);
const uuidOf = (msg: ConsumeMessage) => String(msg.properties.headers!.serverCorrelationUuid);
/** Indices 1..12: every 4th is 'Noise', the rest 'Order'. */
const typeAt = (i: number) => (i % 4 === 0 ? 'Noise' : 'Order');

describe('replayable interface (P2)', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let context: AmqpContext | null = null;
  const all = uniqueName('billing');
  const batched = uniqueName('batched');
  const interfaces = [
    { name: all, type: 'replayable' as const, ackBatch: 1 },
    { name: batched, type: 'replayable' as const, ackBatch: 4, includeTypes: ['Order'] },
  ];
  const start = () =>
    startAmqpContext(
      db.url,
      { inputQueue: false, interfaces, connectionName: uniqueName('ordinal-replay') },
      { startMarker: false },
    );
  const collectors: Collector[] = [];
  const consume = async (name: string) => {
    const c = await collect(broker, `${name}.sink`);
    collectors.push(c);
    return c;
  };
  const ack = (name: string, index: number, serverCorrelationUuid: string) =>
    broker.publish(`${name}.ack`, { index, serverCorrelationUuid });
  const bookmark = async (name: string) =>
    Number(
      (
        await db.query<{ position: string }>(
          'SELECT position FROM interface_bookmarks WHERE name = $1',
          [name],
        )
      )[0]?.position ?? -1,
    );
  const status = (name: string) => context!.interfaces.statuses().find((s) => s.name === name)!;
  let firstUuid = '';

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    // Given a log of 12 messages written before the interfaces existed
    const writer = await startAmqpContext(
      db.url,
      { inputQueue: false, connectionName: uniqueName('ordinal-seed') },
      { startMarker: false },
    );
    for (let i = 1; i <= 12; i++)
      await writer.writer.append({
        messages: [
          { messageType: typeAt(i), userId: `customer-${i}`, body: { i }, metadata: { n: i } },
        ],
      });
    await writer.close();
    context = await start();
  });
  afterAll(async () => {
    for (const c of collectors) await c.stop();
    await context?.close();
    await broker?.deleteQueues(...interfaces.flatMap((i) => [`${i.name}.sink`, `${i.name}.ack`]));
    await broker?.close();
    await db?.drop();
  });

  it('catches a new interface up from index 1 with the documented headers and log line, then continues live', async () => {
    // When the interfaces start on that log
    const sink = await consume(all);
    await waitFor(() => sink.messages.length === 12, 10_000, '12 deliveries');

    // Then every index arrives in order, persistent, with its headers
    expect(sink.messages.map(indexOf)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const first = sink.messages[0];
    firstUuid = uuidOf(first);
    expect(first.properties.deliveryMode).toBe(2);
    expect(first.properties.headers).toMatchObject({
      index: 1,
      messageType: 'Order',
      userId: 'customer-1',
      metadata: '{"n":1}',
      serverCorrelationUuid: expect.any(String) as unknown,
    });
    expect(first.properties.headers!.contentHash).toMatch(/^[0-9a-f]{16,}$/);
    expect(JSON.parse(first.content.toString())).toEqual({ i: 1 });
    // And the catch-up is logged in the seed's words
    await waitFor(
      () =>
        context!.logs.matching(
          new RegExp(
            `Interface ${all} catch-up completed: processed 12 messages, skipped 0 messages, reached message ID 12`,
          ),
        ).length === 1,
      5000,
      'the catch-up line',
    );
    await waitFor(
      () =>
        context!.logs.matching(
          new RegExp(
            `Interface ${batched} catch-up completed: processed 9 messages, skipped 3 messages, reached message ID 12`,
          ),
        ).length === 1,
      5000,
      'the batched catch-up line',
    );
    expect(status(all).state).toBe('live');
  });

  it('moves the bookmark only over the contiguous run: 7 before 6 keeps it at 5, a stale uuid is dropped', async () => {
    // Given acknowledgements of 1..5
    for (let i = 1; i <= 5; i++) await ack(all, i, firstUuid);
    await waitFor(async () => (await bookmark(all)) === 5, 5000, 'bookmark 5');

    // When 7 arrives before 6, followed by a 6 from another run
    await ack(all, 7, firstUuid);
    await ack(all, 6, 'a-previous-run');
    await waitFor(() => status(all).staleAcks === 1, 5000, 'the stale ack counted');

    // Then the bookmark stays at 5
    expect(await bookmark(all)).toBe(5);
    expect(status(all).acknowledged).toBe(5);

    // And when 6 arrives, it moves over 6 and 7
    await ack(all, 6, firstUuid);
    await waitFor(async () => (await bookmark(all)) === 7, 5000, 'bookmark 7');
  });

  it("moves in whole batches, counting the messages acknowledged on the consumer's behalf", async () => {
    // Given the batched interface (batch 4, only Order: 4, 8 and 12 are skipped for it)
    const sink = await consume(batched);
    await waitFor(() => sink.messages.length === 9, 5000, '9 Order deliveries');
    expect(sink.messages.map(indexOf)).toEqual([1, 2, 3, 5, 6, 7, 9, 10, 11]);
    const uuid = uuidOf(sink.messages[0]);

    // When 3, 1, 2 are acknowledged: 1..4 are done (4 skipped), a whole batch
    for (const i of [3, 1, 2]) await ack(batched, i, uuid);
    await waitFor(async () => (await bookmark(batched)) === 4, 5000, 'bookmark 4');
    // And 5, 6: not a whole batch yet
    for (const i of [5, 6]) await ack(batched, i, uuid);
    await waitFor(() => status(batched).acknowledged === 6, 5000, 'acknowledged 6');
    expect(await bookmark(batched)).toBe(4);
    // And 7 completes 5..8 (8 skipped); 10 and 11 wait for 9
    for (const i of [7, 10, 11]) await ack(batched, i, uuid);
    await waitFor(async () => (await bookmark(batched)) === 8, 5000, 'bookmark 8');
    await waitFor(() => status(batched).acknowledged === 8, 5000, 'acknowledged 8');

    // Then a message committed now is published live
    await context!.writer.append({ messages: [{ messageType: 'Order', body: { i: 13 } }] });
    await waitFor(() => sink.messages.some((m) => indexOf(m) === 13), 5000, 'live delivery of 13');
  });

  it('after a restart resends exactly what the bookmarks imply, with a new correlation uuid', async () => {
    // Given bookmarks 7 (batch 1, every type) and 8 (batch 4, Order only) and a log up to 13
    for (const c of collectors.splice(0)) await c.stop();
    const expected = {
      [all]: Array.from({ length: 13 }, (_, i) => i + 1).filter((i) => i > 7),
      [batched]: Array.from({ length: 13 }, (_, i) => i + 1).filter(
        (i) => i > 8 && (i === 13 || typeAt(i) === 'Order'),
      ),
    };
    await context!.close();

    // When the server starts again
    context = await start();
    const sinks = { [all]: await consume(all), [batched]: await consume(batched) };

    // Then each interface resends exactly the indices after its bookmark
    for (const name of [all, batched]) {
      await waitFor(
        () =>
          context!.logs.matching(new RegExp(`Interface ${name} catch-up completed`)).length === 1,
        10_000,
        `${name} catch-up`,
      );
      const fresh = () =>
        sinks[name].messages.filter((m) => uuidOf(m) === status(name).correlationUuid);
      await waitFor(() => fresh().length === expected[name].length, 5000, `${name} resent`);
      expect(fresh().map(indexOf)).toEqual(expected[name]);
      expect(status(name).correlationUuid).not.toBe(firstUuid);
    }
    expect(
      context.logs.matching(
        new RegExp(
          `Interface ${batched} catch-up completed: processed 4 messages, skipped 1 messages, reached message ID 13`,
        ),
      ),
    ).toHaveLength(1);
    // And an acknowledgement with the previous run's uuid is dropped
    await ack(all, 8, firstUuid);
    await waitFor(() => status(all).staleAcks === 1, 5000, 'the stale ack dropped');
    expect(status(all).acknowledged).toBe(7);
  });
});
