import {
  context as otelContext,
  trace,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Span,
} from '@opentelemetry/api';
import {
  ATTRIBUTES,
  SPANS,
  contextFromTraceparent,
  correlationOf,
  linksTo,
  ordinalTracer,
  runWithCorrelation,
  type StoredMessage,
} from '@ordinal/log';

/**
 * A batch's span (`ordinal.projection.batch` or `ordinal.subscription.batch`): a root, linked
 * to the append spans whose trace contexts are stored with its messages (a batch applies
 * messages of many traces; OpenTelemetry's messaging conventions link them rather than pick one parent).
 */
export function startBatchSpan(
  name: string,
  kind: 'subscription' | 'projection',
  from: number,
  to: number,
  messages: StoredMessage[],
): Span {
  const span = ordinalTracer().startSpan(
    kind === 'projection' ? SPANS.projectionBatch : SPANS.subscriptionBatch,
    { kind: SpanKind.CONSUMER },
    ROOT_CONTEXT,
  );
  // Only for a recording span: without an SDK a batch parses and builds nothing it would drop.
  if (span.isRecording()) {
    span.setAttributes({
      [ATTRIBUTES.consumerName]: name,
      [ATTRIBUTES.consumerKind]: kind,
      [ATTRIBUTES.fromPosition]: from,
      [ATTRIBUTES.toPosition]: to,
      [ATTRIBUTES.batchMessages]: messages.length,
      [ATTRIBUTES.messagingBatchCount]: messages.length,
      [ATTRIBUTES.messagingSystem]: 'ordinal',
    });
    span.addLinks(linksTo(messages.map((m) => m.traceparent)));
  }
  return span;
}

/** Ends a span, marking it failed when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    // A thrown value that is not an Error: its String() is the only description there is.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({
      code: SpanStatusCode.ERROR,
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as above
      message: error instanceof Error ? error.message : String(error),
    });
  }
  span.end();
}

/**
 * Runs one handler call inside the message's correlation (what it appends is caused by the
 * message) and inside an `ordinal.handle` span that continues the message's stored trace
 * (its parent is the append span; the batch span is linked), else a child of the batch span.
 */
export async function handleTraced<T>(
  message: StoredMessage,
  consumer: string,
  batch: Span | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const parent = message.traceparent
    ? contextFromTraceparent(message.traceparent, ROOT_CONTEXT)
    : batch
      ? trace.setSpan(ROOT_CONTEXT, batch)
      : ROOT_CONTEXT;
  const span = ordinalTracer().startSpan(SPANS.handle, { kind: SpanKind.CONSUMER }, parent);
  if (span.isRecording()) {
    span
      .setAttribute(ATTRIBUTES.consumerName, consumer)
      .setAttribute(ATTRIBUTES.messageIndex, message.id)
      .setAttribute(ATTRIBUTES.messageType, message.messageType);
    if (message.correlationId) span.setAttribute(ATTRIBUTES.correlationId, message.correlationId);
    const batchContext = batch?.spanContext();
    if (batchContext && trace.isSpanContextValid(batchContext))
      span.addLink({ context: batchContext });
  }
  try {
    const result = await runWithCorrelation(correlationOf(message), () =>
      otelContext.with(trace.setSpan(parent, span), work),
    );
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}
