import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { DEV_AUTH, http, rawHttp, waitFor } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import {
  brokerUrl,
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '../support/amqp-broker.js';
import { startChainApp, type ChainProbe } from '../support/order-chain.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

/**
 * Issue 16: one order followed through the system. The server runs in its own process with
 * no OpenTelemetry SDK (so it records no spans and passes the caller's trace context on as it
 * came); a user's application with a projection and an aggregate runs in this one.
 */
describe('correlation and causation through REST, a projection, an aggregate and every reader', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let server: ServerProcess;
  let baseUrl: string;
  let chain: { app: INestApplicationContext; probe: ChainProbe };
  let sink: Collector;
  const iface = uniqueName('trace-billing');

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    const dir = mkdtempSync(join(tmpdir(), 'ordinal-trace-'));
    const file = join(dir, 'interfaces.yaml');
    writeFileSync(file, `interfaces:\n  - name: ${iface}\n    type: realtime\n`);
    server = spawnServer({
      DATABASE_URL: db.url,
      PORT: '0',
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: 'off',
      ORDINAL_INTERFACES: file,
    });
    baseUrl = `http://127.0.0.1:${await listeningPort(server, 60_000)}`;
    chain = await startChainApp(db.url);
    sink = await collect(broker, `${iface}.sink`);
    await waitFor(
      async () =>
        (await http(baseUrl, 'GET', '/api/interfaces')).body.interfaces.some(
          (i: { name: string; state: string }) => i.name === iface && i.state === 'live',
        ),
      20_000,
      'the interface to be live',
    );
  }, 90_000);
  afterAll(async () => {
    await sink?.stop();
    await chain?.app.close();
    await server?.stop();
    await broker?.deleteQueues(`${iface}.sink`);
    await broker?.close();
    await db?.drop();
  });

  it('stores the chain with the right ids and shows it the same through SSE, the page, an interface and a projection context', async () => {
    // Given a live SSE stream
    const sse = await SseConnection.open(
      baseUrl,
      '/api/events/stream?types=OrderPlaced,PaymentRequested',
      DEV_AUTH,
    );
    expect(sse.status).toBe(200);

    // When an order is published with a W3C traceparent and X-Correlation-Id
    const published = await http(
      baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'OrderPlaced', content: { orderId: 'o-16' } },
      {
        ...DEV_AUTH,
        'x-correlation-id': 'order-o-16',
        traceparent: TRACEPARENT,
      },
    );
    expect(published.status).toBe(201);
    const order = published.body;
    expect(order).toMatchObject({
      correlationId: 'order-o-16',
      causationId: 'order-o-16',
      traceparent: TRACEPARENT,
    });

    // Then the projection's aggregate command stores PaymentRequested caused by the order, in its correlation
    const page = await waitFor(
      async () => {
        const res = await http(baseUrl, 'GET', '/api/events?correlationId=order-o-16');
        return res.body.count === 2 ? res.body : null;
      },
      20_000,
      'the aggregate event in the correlation',
    );
    const [first, payment] = page.messages;
    expect(first).toMatchObject({
      id: order.id,
      messageType: 'OrderPlaced',
      correlationId: 'order-o-16',
      causationId: 'order-o-16',
    });
    expect(payment).toMatchObject({
      messageType: 'PaymentRequested',
      streamId: 'payment-o-16',
      correlationId: 'order-o-16',
      causationId: String(order.id),
      traceparent: TRACEPARENT,
    });
    expect(payment.id).toBeGreaterThan(order.id);

    // And the page lists nothing of another correlation
    const other = await http(baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderPlaced',
      content: { orderId: 'o-17' },
    });
    expect(other.body.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(other.body.correlationId).not.toBe('order-o-16');
    expect(
      (
        await http(baseUrl, 'GET', '/api/events?correlationId=order-o-16&types=PaymentRequested')
      ).body.messages.map((m: { id: number }) => m.id),
    ).toEqual([payment.id]);

    // And SSE shows the same ids
    await sse.waitFor(
      () => sse.indices().includes(payment.id),
      20_000,
      'the payment on the stream',
    );
    const streamed = new Map(
      sse.events
        .filter((e) => e.event === 'message')
        .map((e) => [e.data.message.id, e.data.message]),
    );
    expect(streamed.get(order.id)).toMatchObject({
      correlationId: 'order-o-16',
      causationId: 'order-o-16',
      traceparent: TRACEPARENT,
    });
    expect(streamed.get(payment.id)).toMatchObject({
      correlationId: 'order-o-16',
      causationId: String(order.id),
      traceparent: TRACEPARENT,
    });
    sse.close();

    // And the interface delivery carries them as the AMQP correlation_id and headers
    const delivered = await waitFor(
      () => sink.messages.find((m) => m.properties.headers?.index === payment.id),
      20_000,
      'the interface delivery',
    );
    expect(delivered.properties.correlationId).toBe('order-o-16');
    expect(delivered.properties.headers).toMatchObject({
      correlationId: 'order-o-16',
      causationId: String(order.id),
      traceparent: TRACEPARENT,
    });
    const orderDelivery = sink.messages.find((m) => m.properties.headers?.index === order.id);
    expect(orderDelivery?.properties.correlationId).toBe('order-o-16');

    // And the projections' contexts saw the same chain
    const audit = await waitFor(
      () => chain.probe.seen.find((s) => s.projection === 'audit' && s.index === payment.id),
      20_000,
      'the audit projection',
    );
    expect(audit).toMatchObject({
      correlationId: 'order-o-16',
      causationId: String(order.id),
      traceparent: TRACEPARENT,
    });
    expect(
      chain.probe.seen.find((s) => s.projection === 'billing' && s.index === order.id),
    ).toMatchObject({ correlationId: 'order-o-16', causationId: 'order-o-16' });
  }, 60_000);

  it('takes the correlation from the traceparent when no X-Correlation-Id is sent, and per message in a batch', async () => {
    const traced = await http(
      baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'Ping', content: {} },
      { ...DEV_AUTH, traceparent: TRACEPARENT },
    );
    expect(traced.body).toMatchObject({
      correlationId: TRACE_ID,
      causationId: TRACE_ID,
      traceparent: TRACEPARENT,
    });

    const batch = await http(
      baseUrl,
      'POST',
      '/api/events/messages',
      {
        messages: [
          { messageType: 'Ping', content: { n: 1 } },
          { messageType: 'Ping', content: { n: 2 }, correlationId: 'own', causationId: 'cmd-7' },
        ],
      },
      { ...DEV_AUTH, 'x-correlation-id': 'batch-1' },
    );
    expect(batch.status).toBe(201);
    expect(batch.body.messages[0]).toMatchObject({
      correlationId: 'batch-1',
      causationId: 'batch-1',
    });
    expect(batch.body.messages[1]).toMatchObject({ correlationId: 'own', causationId: 'cmd-7' });
    expect(batch.body.messages[0].traceparent).toBeUndefined();

    // And a stream append over REST takes the request's correlation too
    const appended = await http(
      baseUrl,
      'POST',
      '/api/streams/cart-16/events',
      { expectedVersion: 0, events: [{ eventType: 'CartOpened', data: {} }] },
      { ...DEV_AUTH, 'x-correlation-id': 'cart-flow' },
    );
    expect(appended.status).toBe(201);
    expect(
      (await http(baseUrl, 'GET', `/api/events/${appended.body.firstIndex}`)).body,
    ).toMatchObject({ streamId: 'cart-16', correlationId: 'cart-flow', causationId: 'cart-flow' });
  });

  it('answers a bad X-Correlation-Id or correlationId with a 400 naming it', async () => {
    const header = await rawHttp(
      baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'Ping', content: {} },
      { ...DEV_AUTH, 'x-correlation-id': 'x'.repeat(201) },
    );
    expect(header.status).toBe(400);
    expect(header.body.message).toMatch(/X-Correlation-Id/);
    const query = await http(baseUrl, 'GET', `/api/events?correlationId=${'y'.repeat(201)}`);
    expect(query.status).toBe(400);
    expect(query.body.message).toMatch(/correlationId/);
    const body = await http(baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Ping',
      content: {},
      correlationId: '',
    });
    expect(body.status).toBe(400);
    expect(JSON.stringify(body.body.message)).toMatch(/correlationId/);
  });
});
