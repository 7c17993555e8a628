import { randomUUID } from 'node:crypto';
import { BadRequestException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { formatTraceparent, type CorrelationContext } from '@ordinal/log';
import { isStorableText } from '@ordinal/pg';
import { requestTrace } from './http-tracing.hook.js';

/**
 * The correlation of what a request appends: `X-Correlation-Id`, else the `traceparent`'s trace
 * id, else a new UUID; caused by the correlation id; the trace context to store is the
 * request's span (with an SDK) or the caller's `traceparent` as sent. A bad `X-Correlation-Id`
 * is a 400. Write routes pass it to the writer explicitly (AppendRequest.correlation).
 */
export function requestCorrelation(request: FastifyRequest): CorrelationContext {
  const header = request.headers['x-correlation-id'];
  if (Array.isArray(header))
    throw new BadRequestException('X-Correlation-Id: send the header once');
  if (
    header !== undefined &&
    (header.length === 0 || header.length > 200 || !isStorableText(header))
  ) {
    throw new BadRequestException('X-Correlation-Id must be 1-200 characters of text');
  }
  const state = requestTrace(request);
  const incoming = state?.traceparent ?? null;
  const correlationId = header ?? (incoming ? incoming.slice(3, 35) : randomUUID());
  const traceparent = (state && formatTraceparent(state.span.spanContext())) ?? incoming;
  return { correlationId, causationId: correlationId, traceparent };
}
