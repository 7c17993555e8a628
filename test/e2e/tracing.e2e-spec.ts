import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { context, trace, SpanKind, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, waitFor, type TestServer } from '../support/test-server.js';
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
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

// The user's SDK: what an application registers (here with the in-memory exporter).
const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(contextManager);
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);

const traceparentOf = (c: SpanContext) => `00-${c.traceId}-${c.spanId}-01`;
const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const linksTo = (span: ReadableSpan, target: ReadableSpan) =>
  span.links.some((l) => l.context.spanId === target.spanContext().spanId);

/**
 * Issue 16: with an OpenTelemetry SDK in the process, the server (in process here, so its spans
 * reach the in-memory exporter) and a user's application record the documented spans, with
 * the parent and link relations docs/observability.md describes.
 */
describe('OpenTelemetry spans with an SDK registered', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let server: TestServer;
  let chain: { app: INestApplicationContext; probe: ChainProbe };
  let sink: Collector;
  const iface = uniqueName('trace-spans');
  const input = uniqueName('trace-input');

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    const file = join(mkdtempSync(join(tmpdir(), 'ordinal-spans-')), 'interfaces.yaml');
    writeFileSync(file, `interfaces:\n  - name: ${iface}\n    type: realtime\n`);
    server = await startServer(db.url, {
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: input,
      ORDINAL_INTERFACES: file,
    });
    chain = await startChainApp(db.url);
    sink = await collect(broker, `${iface}.sink`);
    await waitFor(
      async () =>
        (await http(server.baseUrl, 'GET', '/api/interfaces')).body.interfaces.some(
          (i: { name: string; state: string }) => i.name === iface && i.state === 'live',
        ),
      20_000,
      'the interface to be live',
    );
  }, 90_000);
  afterAll(async () => {
    await sink?.stop();
    await chain?.app.close();
    await server?.close();
    await broker?.deleteQueues(`${iface}.sink`, input, `${input}.rejected`);
    await broker?.close();
    await db?.drop();
    trace.disable();
    context.disable();
  });

  it('HTTP request → append → flush, projection batch and handle → aggregate append, interface publish window', async () => {
    exporter.reset();
    // When a client in trace TRACE_ID publishes an order
    const res = await http(
      server.baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'OrderPlaced', content: { orderId: 'o-span' } },
      { ...DEV_AUTH, traceparent: TRACEPARENT, 'x-correlation-id': 'order-o-span' },
    );
    expect(res.status).toBe(201);
    const order = res.body;
    const paymentRead = await waitFor(
      async () => {
        const page = await http(
          server.baseUrl,
          'GET',
          '/api/events?correlationId=order-o-span&types=PaymentRequested',
        );
        return page.body.messages[0];
      },
      20_000,
      'the payment',
    );
    await waitFor(
      () => chain.probe.seen.some((s) => s.projection === 'audit' && s.index === paymentRead.id),
      20_000,
      'the audit projection',
    );
    await waitFor(
      () =>
        sink.messages.some((m) => m.properties.headers?.index === paymentRead.id) &&
        named('ordinal.interface.publish').some((s) => linksToTrace(s, paymentRead.traceparent)),
      20_000,
      'the publish span',
    );

    // Then the HTTP span is a SERVER child of the caller's span, with the semantic-convention attributes
    const httpSpan = spans().find(
      (s) => s.kind === SpanKind.SERVER && s.name === 'PUT /api/events/message',
    );
    expect(httpSpan).toBeDefined();
    expect(httpSpan!.spanContext().traceId).toBe(TRACE_ID);
    expect(httpSpan!.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(httpSpan!.attributes).toMatchObject({
      'http.request.method': 'PUT',
      'http.route': '/api/events/message',
      'url.path': '/api/events/message',
      'http.response.status_code': 201,
    });

    // And the append is its PRODUCER child, whose context is stored with the message
    const append = named('ordinal.append').find(
      (s) => s.parentSpanContext?.spanId === httpSpan!.spanContext().spanId,
    );
    expect(append).toBeDefined();
    expect(append!.kind).toBe(SpanKind.PRODUCER);
    expect(append!.attributes).toMatchObject({
      'ordinal.append.messages': 1,
      'ordinal.correlation_id': 'order-o-span',
    });
    expect(order.traceparent).toBe(traceparentOf(append!.spanContext()));

    // And the flush that wrote it is a root linked to the append, with its batch size and mode
    const flush = named('ordinal.flush').find((s) => linksTo(s, append!));
    expect(flush).toBeDefined();
    expect(flush!.parentSpanContext).toBeUndefined();
    expect(flush!.attributes).toMatchObject({
      'ordinal.flush.mode': 'gapless',
      'ordinal.flush.created': 1,
    });
    expect(flush!.attributes['ordinal.flush.batch_size']).toBeGreaterThanOrEqual(1);

    // And the billing batch links to the append, and names its projection and positions
    const batch = named('ordinal.projection.batch').find(
      (s) => s.attributes['ordinal.consumer.name'] === 'billing' && linksTo(s, append!),
    );
    expect(batch).toBeDefined();
    expect(batch!.kind).toBe(SpanKind.CONSUMER);
    expect(batch!.attributes['ordinal.batch.from_position']).toBeLessThanOrEqual(order.id);
    expect(batch!.attributes['ordinal.batch.to_position']).toBeGreaterThanOrEqual(order.id);
    expect(batch!.attributes['ordinal.batch.messages']).toBeGreaterThanOrEqual(1);

    // And the handler's span continues the stored trace (child of the append), linked to the batch
    const handle = named('ordinal.handle').find(
      (s) =>
        s.attributes['ordinal.consumer.name'] === 'billing' &&
        s.attributes['ordinal.message.index'] === order.id,
    );
    expect(handle).toBeDefined();
    expect(handle!.parentSpanContext?.spanId).toBe(append!.spanContext().spanId);
    expect(handle!.spanContext().traceId).toBe(TRACE_ID);
    expect(linksTo(handle!, batch!)).toBe(true);

    // And the aggregate's save is an append under the handler, in the same trace, stored with PaymentRequested
    const aggregateAppend = named('ordinal.append').find(
      (s) => s.parentSpanContext?.spanId === handle!.spanContext().spanId,
    );
    expect(aggregateAppend).toBeDefined();
    expect(aggregateAppend!.attributes).toMatchObject({
      'ordinal.stream_id': 'payment-o-span',
      'ordinal.correlation_id': 'order-o-span',
    });
    expect(paymentRead.traceparent).toBe(traceparentOf(aggregateAppend!.spanContext()));
    expect(paymentRead.causationId).toBe(String(order.id));

    // And the audit projection's batch links to that append (its span ends after its commit,
    // a moment after the handler the probe saw ran)
    await waitFor(
      () =>
        named('ordinal.projection.batch').some(
          (s) => s.attributes['ordinal.consumer.name'] === 'audit' && linksTo(s, aggregateAppend!),
        ),
      10_000,
      "the audit batch's span",
    );

    // And the interface's publish window links to the appends of what it published
    const publish = named('ordinal.interface.publish').find((s) => linksTo(s, aggregateAppend!));
    expect(publish).toBeDefined();
    expect(publish!.kind).toBe(SpanKind.PRODUCER);
    expect(publish!.attributes).toMatchObject({
      'ordinal.interface.name': iface,
      'messaging.destination.name': `${iface}.sink`,
    });
    expect(publish!.attributes['messaging.batch.message_count']).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('an AMQP input delivery continues its traceparent and keeps its correlation_id', async () => {
    exporter.reset();
    const channel = await broker.connection.createConfirmChannel();
    channel.sendToQueue(input, Buffer.from('{"n":1}'), {
      correlationId: 'amqp-corr',
      headers: { messageType: 'Tick', traceparent: TRACEPARENT, causationId: 'cmd-1' },
    });
    await channel.waitForConfirms();
    await channel.close();
    const stored = await waitFor(
      async () =>
        (await http(server.baseUrl, 'GET', '/api/events?correlationId=amqp-corr')).body.messages[0],
      20_000,
      'the input message',
    );
    expect(stored).toMatchObject({
      messageType: 'Tick',
      correlationId: 'amqp-corr',
      causationId: 'cmd-1',
    });
    const append = await waitFor(
      () => named('ordinal.append').find((s) => s.parentSpanContext?.spanId === CALLER_SPAN),
      10_000,
      'the append span',
    );
    expect(append.spanContext().traceId).toBe(TRACE_ID);
    expect(stored.traceparent).toBe(traceparentOf(append.spanContext()));
  }, 30_000);
});

function linksToTrace(span: ReadableSpan, traceparent: string | undefined): boolean {
  return !!traceparent && span.links.some((l) => traceparent.includes(l.context.spanId));
}
