/**
 * What a user's `node --import` of an OpenTelemetry SDK does, for `bench:tracing`: a tracer
 * provider with a batch processor and an exporter that drops what it gets (the cost of
 * recording spans, without a collector's network cost), and the async-hooks context manager.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

let exported = 0;
const dropping: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    spanProcessors: [
      new BatchSpanProcessor(dropping, {
        maxQueueSize: 65_536,
        maxExportBatchSize: 2048,
        scheduledDelayMillis: 200,
      }),
    ],
  }),
);
process.once('SIGTERM', () => {
  process.stderr.write(`otel-register: ${exported} spans exported\n`);
});
