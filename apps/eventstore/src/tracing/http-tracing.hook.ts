import type { FastifyInstance, FastifyRequest } from 'fastify';
import { context as otelContext, trace, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { contextFromTraceparent, ordinalTracer, parseTraceparent } from '@ordinal/log';

/** What the tracing hook knows of a request: its span and the headers' correlation. */
export interface RequestTrace {
  span: Span;
  /** `X-Correlation-Id` as sent (validated by the interceptor), else the traceparent's trace id. */
  correlationHeader: string | string[] | undefined;
  traceparent: string | null;
}

const TRACE = Symbol('ordinal.requestTrace');

/** The trace state the hook gave a request (undefined for requests it did not see). */
export function requestTrace(request: FastifyRequest): RequestTrace | undefined {
  return (request as unknown as Record<symbol, RequestTrace | undefined>)[TRACE];
}

/**
 * A SERVER span per HTTP request (`{method} {route}`, with the stable HTTP semantic-convention
 * attributes), a child of the request's W3C `traceparent` when it has a valid one. Without an
 * OpenTelemetry SDK the span is the API's no-op one. The span is made active for the handler by
 * TracingInterceptor (Fastify's body parsing would lose an async context set here).
 */
export function registerHttpTracing(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    const header = request.headers.traceparent;
    const traceparent = typeof header === 'string' && parseTraceparent(header) ? header.trim().toLowerCase() : null;
    const route = request.routeOptions.url;
    const path = request.url.split('?', 1)[0];
    const span = ordinalTracer().startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': path,
          'url.scheme': request.protocol,
          ...(route ? { 'http.route': route } : {}),
          ...(request.headers['user-agent'] ? { 'user_agent.original': request.headers['user-agent'] } : {}),
          'network.protocol.version': request.raw.httpVersion,
        },
      },
      contextFromTraceparent(traceparent, otelContext.active()),
    );
    const state: RequestTrace = { span, correlationHeader: request.headers['x-correlation-id'], traceparent };
    (request as unknown as Record<symbol, RequestTrace>)[TRACE] = state;
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const state = requestTrace(request);
    if (state) {
      state.span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) {
        state.span.setAttribute('error.type', String(reply.statusCode));
        state.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      state.span.end();
    }
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    const state = requestTrace(request);
    if (state) {
      state.span.setAttribute('error.type', 'aborted');
      state.span.end();
    }
    done();
  });
}

/** The span of a request, as an OpenTelemetry context to run its handler in. */
export function spanContextOf(state: RequestTrace) {
  return trace.setSpan(otelContext.active(), state.span);
}
