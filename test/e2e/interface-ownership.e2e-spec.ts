import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { DEV_AUTH, http, waitFor } from '../support/test-server.js';
import {
  brokerUrl,
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '../support/amqp-broker.js';

/** Two server processes on one database with the same push interfaces: one publishes, the other stands by. */
describe('two servers with the same interfaces publish each message once per interface', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  const servers: ServerProcess[] = [];
  const collectors: Collector[] = [];
  const billing = uniqueName('owned-billing');
  const notify = uniqueName('owned-notify');
  const ports: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    const dir = mkdtempSync(join(tmpdir(), 'ordinal-owned-interfaces-'));
    const file = join(dir, 'interfaces.yaml');
    writeFileSync(
      file,
      `interfaces:\n  - name: ${billing}\n    type: replayable\n    ackBatch: 10\n  - name: ${notify}\n    type: realtime\n    includeTypes: [Paid]\n`,
    );
    for (let i = 0; i < 2; i++) {
      const server = spawnServer({
        DATABASE_URL: db.url,
        PORT: '0',
        AMQP_URL: brokerUrl(),
        ORDINAL_AMQP_INPUT_QUEUE: 'off',
        ORDINAL_INTERFACES: file,
        ORDINAL_TAKEOVER_MS: '3000',
      });
      servers.push(server);
      ports.push(await listeningPort(server, 60_000));
    }
  });
  afterAll(async () => {
    for (const c of collectors) await c.stop();
    await Promise.all(servers.map((s) => s.stop()));
    await broker?.deleteQueues(`${billing}.sink`, `${billing}.ack`, `${notify}.sink`);
    await broker?.close();
    await db?.drop();
  });

  it('replayable and realtime: every index arrives once, from one of the two servers', async () => {
    // Given a billing consumer acknowledging everything to Ordinal, and a realtime consumer
    const ackChannel = await broker.channel();
    const billingSink = await collect(broker, `${billing}.sink`, (msg, channel) => {
      const headers = msg.properties.headers!;
      ackChannel.sendToQueue(
        `${billing}.ack`,
        Buffer.from(
          JSON.stringify({
            index: Number(headers.index),
            serverCorrelationUuid: headers.serverCorrelationUuid,
          }),
        ),
      );
      channel.ack(msg);
    });
    const notifySink = await collect(broker, `${notify}.sink`);
    collectors.push(billingSink, notifySink);
    // The realtime interface publishes only what commits while it runs: wait until its owner is live
    await waitFor(
      async () => {
        const lists = await Promise.all(
          ports.map((p) =>
            http(`http://127.0.0.1:${p}`, 'GET', '/api/interfaces', undefined, DEV_AUTH),
          ),
        );
        return (
          lists.some((l) =>
            l.body.interfaces.some(
              (i: { name: string; state: string }) => i.name === notify && i.state === 'live',
            ),
          ) || null
        );
      },
      30_000,
      'the realtime interface live on one server',
    );
    // When 200 messages are written through both servers
    const ids: number[] = [];
    for (let n = 0; n < 200; n++) {
      const res = await http(
        `http://127.0.0.1:${ports[n % 2]}`,
        'PUT',
        '/api/events/message',
        { messageType: 'Paid', content: { n } },
        DEV_AUTH,
      );
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const head = Math.max(...ids);
    const indices = (c: Collector) => c.messages.map((m) => Number(m.properties.headers!.index));
    await waitFor(
      () => new Set(indices(billingSink)).has(head) && new Set(indices(notifySink)).has(head),
      30_000,
      'both sinks to reach the head',
    );
    // Then the replayable sink has every index from 1 to the head exactly once
    const billed = indices(billingSink);
    expect(billed.length).toBe(new Set(billed).size);
    expect([...billed].sort((a, b) => a - b)).toEqual(
      Array.from({ length: head }, (_, i) => i + 1),
    );
    // And the realtime sink every Paid message once
    const notified = indices(notifySink);
    expect(notified.sort((a, b) => a - b)).toEqual(ids);
    // And one server publishes while the other stands by
    const states = await Promise.all(
      ports.map(async (p) =>
        (
          await http(`http://127.0.0.1:${p}`, 'GET', '/api/interfaces', undefined, DEV_AUTH)
        ).body.interfaces.map((i: { state: string }) => i.state),
      ),
    );
    expect(states.flat().filter((s) => s === 'standby')).toHaveLength(2);
  });

  it('kill -9 of the publishing server: the other takes over within the bound; the replayable interface loses nothing', async () => {
    // Given the server that publishes billing
    const lists = await Promise.all(
      ports.map(
        async (p) =>
          (await http(`http://127.0.0.1:${p}`, 'GET', '/api/interfaces', undefined, DEV_AUTH)).body
            .interfaces,
      ),
    );
    const ownerAt = lists.findIndex((l) =>
      l.some((i: { name: string; state: string }) => i.name === billing && i.state !== 'standby'),
    );
    expect(ownerAt).toBeGreaterThanOrEqual(0);
    const survivor = `http://127.0.0.1:${ports[1 - ownerAt]}`;
    // When it is killed
    const killedAt = Date.now();
    servers[ownerAt].child.kill('SIGKILL');
    await servers[ownerAt].exited;
    // Then the other server runs the interface within the takeover bound
    await waitFor(
      async () => {
        const list = (await http(survivor, 'GET', '/api/interfaces', undefined, DEV_AUTH)).body
          .interfaces;
        return (
          list.some(
            (i: { name: string; state: string }) =>
              i.name === billing && (i.state === 'live' || i.state === 'catching-up'),
          ) || null
        );
      },
      30_000,
      'the survivor to publish billing',
    );
    expect(Date.now() - killedAt).toBeLessThan(3000 + 1000);
    // And everything written afterwards reaches the billing consumer (what was not acknowledged before may come again)
    const ids: number[] = [];
    for (let n = 0; n < 50; n++)
      ids.push(
        (
          await http(
            survivor,
            'PUT',
            '/api/events/message',
            { messageType: 'Paid', content: { after: n } },
            DEV_AUTH,
          )
        ).body.id,
      );
    const head = Math.max(...ids);
    const billingSink = collectors[0];
    await waitFor(
      () =>
        new Set(billingSink.messages.map((m) => Number(m.properties.headers!.index))).has(head) ||
        null,
      30_000,
      'billing to reach the new head',
    );
    const seen = new Set(billingSink.messages.map((m) => Number(m.properties.headers!.index)));
    expect(Array.from({ length: head }, (_, i) => i + 1).filter((i) => !seen.has(i))).toEqual([]);
  });
});
