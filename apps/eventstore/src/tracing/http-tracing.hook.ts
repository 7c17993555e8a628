import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestStep } from '../http/request-gate.js';
import { context as otelContext, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { contextFromTraceparent, ordinalTracer, parseTraceparent } from '@ordinal/log';

/** What the tracing hook knows of a request: its span and the headers' correlation. */
export interface RequestTrace {
  span: Span;
  /** The caller's valid `traceparent`, normalised, or null. */
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
 * OpenTelemetry SDK the span is the API's no-op one. Write routes store its context with their
 * messages (requestCorrelation) and the append spans become its children through it.
 */
export function httpTracing(fastify: FastifyInstance): RequestStep {
  fastify.addHook('onResponse', onResponse);
  fastify.addHook('onRequestAbort', onRequestAbort);
  return (request, _reply, routeConfig) => {
    const header = request.headers.traceparent;
    const traceparent =
      typeof header === 'string' && parseTraceparent(header) ? header.trim().toLowerCase() : null;
    const route = routeConfig.url;
    const span = ordinalTracer().startSpan(
      route ? `${request.method} ${route}` : request.method,
      { kind: SpanKind.SERVER },
      contextFromTraceparent(traceparent, otelContext.active()),
    );
    if (span.isRecording()) {
      // Only for a recording span: without an SDK a request builds nothing it would drop.
      span.setAttributes({
        'http.request.method': request.method,
        'url.path': request.url.split('?', 1)[0],
        'url.scheme': request.protocol,
        'network.protocol.version': request.raw.httpVersion,
      });
      if (route) span.setAttribute('http.route', route);
      if (request.headers['user-agent'])
        span.setAttribute('user_agent.original', request.headers['user-agent']);
    }
    const state: RequestTrace = { span, traceparent };
    (request as unknown as Record<symbol, RequestTrace>)[TRACE] = state;
    return undefined;
  };
}

const onResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
  const state = requestTrace(request);
  if (state) {
    if (state.span.isRecording())
      state.span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) {
      state.span.setAttribute('error.type', String(reply.statusCode));
      state.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    state.span.end();
  }
  done();
};

const onRequestAbort = (request: FastifyRequest, done: () => void) => {
  const state = requestTrace(request);
  if (state) {
    state.span.setAttribute('error.type', 'aborted');
    state.span.end();
  }
  done();
};
