import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import {
  brokerUrl,
  closeConnectionsNamed,
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '../support/amqp-broker.js';

describe('broker outage (P4, G1)', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let server: TestServer;
  const input = uniqueName('outage-input');
  const billing = uniqueName('outage-billing');
  const notify = uniqueName('outage-notify');
  const connectionName = uniqueName('ordinal-outage');
  const collectors: Collector[] = [];
  const received = new Set<number>();
  let realtime: Collector;

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    const dir = mkdtempSync(join(tmpdir(), 'ordinal-interfaces-'));
    const file = join(dir, 'interfaces.yaml');
    writeFileSync(
      file,
      `interfaces:\n  - name: ${billing}\n    type: replayable\n    ackBatch: 10\n  - name: ${notify}\n    type: realtime\n    includeTypes: [Paid]\n`,
    );
    server = await startServer(db.url, {
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: input,
      ORDINAL_INTERFACES: file,
      ORDINAL_AMQP_CONNECTION_NAME: connectionName,
    });
    // A billing consumer that acknowledges every delivery to Ordinal, then to the broker
    const ackChannel = await broker.channel();
    collectors.push(
      await collect(broker, `${billing}.sink`, (msg, channel) => {
        const index = Number(msg.properties.headers!.index);
        received.add(index);
        ackChannel.sendToQueue(
          `${billing}.ack`,
          Buffer.from(
            JSON.stringify({
              index,
              serverCorrelationUuid: msg.properties.headers!.serverCorrelationUuid,
            }),
          ),
        );
        channel.ack(msg);
      }),
    );
    realtime = await collect(broker, `${notify}.sink`);
    collectors.push(realtime);
  });
  afterAll(async () => {
    for (const c of collectors) await c.stop();
    await server?.close();
    await broker?.deleteQueues(
      input,
      `${input}.rejected`,
      `${billing}.sink`,
      `${billing}.ack`,
      `${notify}.sink`,
    );
    await broker?.close();
    await db?.drop();
  });

  const head = async () =>
    (await http(server.baseUrl, 'GET', '/api/events/head')).body.head as number;
  const interfaces = async () => (await http(server.baseUrl, 'GET', '/api/interfaces')).body;
  const storedKeys = async () =>
    db.query<{ key: string; n: string }>(
      `SELECT idempotency_key AS key, count(*) AS n FROM messages WHERE message_type = 'Paid' GROUP BY 1`,
    );

  it('the input consumer and every interface reconnect by themselves; nothing acknowledged is lost', async () => {
    // Given messages flowing into the input queue
    let published = 0;
    let flowing = true;
    const producer = (async () => {
      while (flowing && published < 400) {
        const n = ++published;
        await broker.publish(
          input,
          { n },
          { messageType: 'Paid', userId: `customer-${n % 5}`, idempotencyKey: `paid-${n}` },
        );
      }
    })();
    await waitFor(() => received.size >= 50, 15_000, '50 deliveries before the outage');
    const realtimeBefore = realtime.messages.length;

    // When the broker closes the server's connection (twice, while messages flow)
    expect(await closeConnectionsNamed(connectionName)).toBe(1);
    await waitFor(async () => (await interfaces()).broker === 'up', 15_000, 'the reconnection');
    await waitFor(() => received.size >= 150, 20_000, 'deliveries after the first outage');
    expect(await closeConnectionsNamed(connectionName)).toBe(1);
    await waitFor(() => published >= 300, 20_000, '300 published');
    flowing = false;
    await producer;

    // Then every published message is stored exactly once (idempotency keys absorb redeliveries)
    await waitFor(
      async () => (await storedKeys()).length === published,
      20_000,
      'every input message stored',
    );
    expect((await storedKeys()).every((r) => r.n === '1')).toBe(true);
    // And the replayable consumer has every index of the log, without a server restart
    const last = await head();
    await waitFor(
      () => received.size >= last,
      20_000,
      `every index up to ${last} at the billing consumer`,
    );
    for (let i = 1; i <= last; i++) expect(received.has(i)).toBe(true);
    // And both interfaces report a restart, with a fresh correlation uuid for the replayable one
    const report = await interfaces();
    const billingReport = report.interfaces.find((i: { name: string }) => i.name === billing);
    expect(billingReport).toMatchObject({
      type: 'replayable',
      state: 'live',
      restarts: expect.any(Number),
    });
    expect(billingReport.restarts).toBeGreaterThanOrEqual(2);
    await waitFor(
      async () =>
        (await interfaces()).interfaces.find((i: { name: string }) => i.name === billing).lag < 10,
      10_000,
      'a billing lag under one batch',
    );

    // And the realtime interface publishes new messages again after the outage
    await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Paid',
      content: { after: 'outage' },
    });
    await waitFor(
      () => realtime.messages.some((m) => JSON.parse(m.content.toString()).after === 'outage'),
      10_000,
      'a realtime delivery after the outage',
    );
    expect(realtime.messages.length).toBeGreaterThan(realtimeBefore);

    // And /metrics shows each interface's bookmark, lag and state
    const metrics = await fetch(`${server.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(
      new RegExp(`ordinal_interface_bookmark\\{interface="${billing}"\\} \\d+`),
    );
    expect(metrics).toMatch(new RegExp(`ordinal_interface_lag\\{interface="${notify}"\\} \\d+`));
    expect(metrics).toMatch(new RegExp(`ordinal_interface_live\\{interface="${billing}"\\} 1`));
    expect(metrics).toMatch(/ordinal_amqp_connected 1/);
    expect(metrics).toMatch(/ordinal_amqp_reconnections 2/);
    // And /health reports the broker
    expect((await http(server.baseUrl, 'GET', '/health')).body).toMatchObject({
      status: 'ok',
      broker: 'up',
    });
  });
});
