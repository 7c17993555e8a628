import { AsyncLocalStorage } from 'node:async_hooks';
import type { StoredMessage } from '../message.js';

/**
 * Where the code running now comes from: the correlation it belongs to, the message or
 * request that caused it, and the trace context to continue. The writer stamps every message
 * appended inside it with these (unless the message names its own).
 */
export interface CorrelationContext {
  correlationId: string;
  causationId: string;
  /** The W3C trace context to continue, when there is one. */
  traceparent: string | null;
}

// One store for the process, like OpenTelemetry's context: the HTTP layer, the AMQP input and
// the consumers set it; the writer (reached through any number of libraries) reads it.
const storage = new AsyncLocalStorage<CorrelationContext>();

/** Runs `work` with `context` as the correlation of everything it appends. */
export function runWithCorrelation<T>(context: CorrelationContext, work: () => T): T {
  return storage.run(context, work);
}

/**
 * Runs `work` outside any correlation: what it appends starts a new one. For callbacks that
 * could otherwise inherit the context of whatever scheduled them (a socket opened in a request).
 */
export function runOutsideCorrelation<T>(work: () => T): T {
  return storage.exit(work);
}

/** The correlation the code running now belongs to, if any. */
export function currentCorrelation(): CorrelationContext | undefined {
  return storage.getStore();
}

/**
 * The context a handler of `message` runs in: what it appends is caused by `message` (its
 * index as text) and belongs to its correlation. A message stored before correlation ids
 * existed starts its own, named by its index.
 */
export function correlationOf(message: StoredMessage): CorrelationContext {
  return {
    correlationId: message.correlationId ?? String(message.id),
    causationId: String(message.id),
    traceparent: message.traceparent,
  };
}
