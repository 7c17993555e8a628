import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { LogLifecycle } from '../log-lifecycle.service.js';
import { ATTRIBUTES, SPANS } from '../trace/span-names.js';
import { formatTraceparent } from '../trace/traceparent.js';

// An application's SDK, with the in-memory exporter.
const exporter = new InMemorySpanExporter();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
);

describe('The append span names the correlation its messages get', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | null = null;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
    trace.disable();
    context.disable();
  });

  it('the StartMarker, appended with no correlation to continue, has ordinal.correlation_id on its append span', async () => {
    // Given a log that writes a StartMarker at start, outside any request
    exporter.reset();
    app = await startLogContext(db.url, { startMarker: true });
    const marker = await app.get(LogLifecycle).whenStarted();
    if (!marker) throw new Error('no StartMarker was written');
    // Then its append span (the one whose context the marker stores) carries the marker's correlation id
    const span = exporter
      .getFinishedSpans()
      .find(
        (s) => s.name === SPANS.append && formatTraceparent(s.spanContext()) === marker.traceparent,
      );
    expect(span).toBeDefined();
    expect(marker.correlationId).toEqual(expect.any(String));
    expect(span!.attributes[ATTRIBUTES.correlationId]).toBe(marker.correlationId);
  });
});
