import { randomUUID } from 'node:crypto';
import { BadRequestException, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { context as otelContext } from '@opentelemetry/api';
import { formatTraceparent, runWithCorrelation, type CorrelationContext } from '@ordinal/log';
import { isStorableText } from '@ordinal/log/internal';
import { requestTrace, spanContextOf, type RequestTrace } from './http-tracing.hook.js';

/** The request's correlation: `X-Correlation-Id`, else the traceparent's trace id, else a new UUID. */
function correlationOf(state: RequestTrace): CorrelationContext {
  const header = state.correlationHeader;
  if (Array.isArray(header)) throw new BadRequestException('X-Correlation-Id: send the header once');
  if (header !== undefined && (header.length === 0 || header.length > 200 || !isStorableText(header))) {
    throw new BadRequestException('X-Correlation-Id must be 1-200 characters of text');
  }
  const correlationId = header ?? (state.traceparent ? state.traceparent.slice(3, 35) : randomUUID());
  const traceparent = formatTraceparent(state.span.spanContext()) ?? state.traceparent;
  return { correlationId, causationId: correlationId, traceparent };
}

/**
 * Runs every handler inside its request's span and correlation, so what it appends is
 * stamped with them (the writer reads both). A bad `X-Correlation-Id` is a 400.
 */
@Injectable()
export class TracingInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const state = requestTrace(context.switchToHttp().getRequest<FastifyRequest>());
    if (!state) return next.handle();
    const correlation = correlationOf(state);
    const active = spanContextOf(state);
    return new Observable((subscriber) =>
      runWithCorrelation(correlation, () => otelContext.with(active, () => next.handle().subscribe(subscriber))),
    );
  }
}
