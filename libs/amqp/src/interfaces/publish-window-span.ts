import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { ATTRIBUTES, SPANS, ordinalTracer, parseTraceparent } from '@ordinal/log';

/**
 * One `ordinal.interface.publish` span: up to a confirm window's worth of consecutive
 * publishes, from the first publish to the last confirm, linked to the stored trace context
 * of each message it published (the append spans), with the indices it covered.
 */
export class PublishWindowSpan {
  private readonly span: Span;
  private published = 0;
  private outstanding = 0;
  private first: number | null = null;
  private last: number | null = null;
  private full = false;

  constructor(
    interfaceName: string,
    queue: string,
    private readonly size: number,
  ) {
    this.span = ordinalTracer().startSpan(
      SPANS.interfacePublish,
      { kind: SpanKind.PRODUCER },
      ROOT_CONTEXT,
    );
    if (this.span.isRecording()) {
      this.span.setAttributes({
        [ATTRIBUTES.interfaceName]: interfaceName,
        [ATTRIBUTES.messagingSystem]: 'rabbitmq',
        [ATTRIBUTES.messagingDestination]: queue,
      });
    }
  }

  /** Whether another publish may join this span. */
  get open(): boolean {
    return !this.full;
  }

  /** A publish joined: its index and stored trace context, from the delivery's headers. */
  add(headers: Record<string, unknown> | undefined): void {
    this.published++;
    this.outstanding++;
    if (this.published >= this.size) this.full = true;
    const index = headers?.index;
    if (typeof index === 'number') {
      this.first ??= index;
      this.last = index;
    }
    if (!this.span.isRecording() || this.published > 128) return;
    const linked = parseTraceparent(
      typeof headers?.traceparent === 'string' ? headers.traceparent : null,
    );
    if (linked) this.span.addLink({ context: linked });
  }

  /** A publish of this span was confirmed; the span ends once it is closed and all are. */
  confirmed(): void {
    this.outstanding--;
    if (this.full && this.outstanding === 0) this.end();
  }

  /** No more publishes join (the window drained); ends it once its publishes are confirmed. */
  close(): void {
    this.full = true;
    if (this.outstanding === 0) this.end();
  }

  /** The window failed: end now, marked failed. */
  fail(error: Error): void {
    if (this.ended) return;
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    this.end();
  }

  private ended = false;

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.span.isRecording()) return this.span.end();
    this.span.setAttribute(ATTRIBUTES.messagingBatchCount, this.published);
    if (this.first !== null) this.span.setAttribute(ATTRIBUTES.fromPosition, this.first);
    if (this.last !== null) this.span.setAttribute(ATTRIBUTES.toPosition, this.last);
    this.span.end();
  }
}
