import { ROOT_CONTEXT, trace, type Context, type Link, type Tracer } from '@opentelemetry/api';
import { parseTraceparent } from './traceparent.js';

/**
 * Ordinal's tracer. Without an OpenTelemetry SDK registered by the application it is the API's
 * no-op tracer: spans are not recorded and cost a few allocations. Asked for on each use, so an
 * SDK registered after the libraries were loaded is still found.
 */
export function ordinalTracer(): Tracer {
  return trace.getTracer('ordinal', '0.1.0');
}

/** A context whose parent span is the stored trace context (no SDK needed to carry it on). */
export function contextFromTraceparent(
  traceparent: string | null | undefined,
  base: Context = ROOT_CONTEXT,
): Context {
  const parent = parseTraceparent(traceparent);
  return parent ? trace.setSpanContext(base, parent) : base;
}

/** Links to the distinct stored trace contexts, at most `max` (a span's link limit is 128 by default). */
export function linksTo(traceparents: Iterable<string | null | undefined>, max = 128): Link[] {
  const seen = new Set<string>();
  const links: Link[] = [];
  for (const traceparent of traceparents) {
    if (!traceparent || seen.has(traceparent) || links.length >= max) continue;
    seen.add(traceparent);
    const context = parseTraceparent(traceparent);
    if (context) links.push({ context });
  }
  return links;
}
