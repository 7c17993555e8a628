import { TraceFlags, isSpanContextValid, type SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A W3C `traceparent` header as a span context, or null when it is absent or malformed (a
 * bad header starts a new trace, as the W3C recommendation says, rather than failing the request).
 */
export function parseTraceparent(header: string | null | undefined): SpanContext | null {
  if (typeof header !== 'string') return null;
  const match = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!match) return null;
  const context: SpanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: parseInt(match[3], 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(context) ? context : null;
}

/** A span context as a W3C `traceparent` (version 00), or null for an invalid one (no SDK, no parent). */
export function formatTraceparent(context: SpanContext | null | undefined): string | null {
  if (!context || !isSpanContextValid(context)) return null;
  return `00-${context.traceId}-${context.spanId}-0${(context.traceFlags & TraceFlags.SAMPLED).toString(16)}`;
}
