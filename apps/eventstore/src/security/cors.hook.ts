import type { RequestStep } from '../http/request-gate.js';

/** What a cross-origin page may send: the token, JSON, and the headers the API reads. */
const ALLOW_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Correlation-Id, traceparent';
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, DELETE';
/** Answer headers a cross-origin script may read besides the safelisted ones. */
const EXPOSE_HEADERS = 'Location, Retry-After, X-Correlation-Id, traceparent, Allow';
/** How long a browser may keep a preflight's answer (s). */
const MAX_AGE = '600';

/**
 * CORS for the origins of `ORDINAL_CORS_ORIGINS` only (none by default: no CORS header at all,
 * and a preflight is the 405 of any method a path lacks). A request from a listed origin gets
 * `Access-Control-Allow-Origin` with that origin; its preflight is answered here with 204.
 * Tokens travel in the Authorization header, never in cookies, so credentials are not allowed.
 * The headers go on the raw response, so the SSE stream (which writes its own head) has them.
 */
export function corsStep(origins: readonly string[]): RequestStep | null {
  if (origins.length === 0) return null;
  const allowed = new Set(origins);
  return (request, reply) => {
    const origin = request.headers.origin;
    reply.raw.setHeader('vary', 'Origin');
    if (origin === undefined || !allowed.has(origin)) return undefined;
    reply.raw.setHeader('access-control-allow-origin', origin);
    if (request.method !== 'OPTIONS' || !request.headers['access-control-request-method']) {
      reply.raw.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
      return undefined;
    }
    void reply
      .code(204)
      .header('access-control-allow-methods', ALLOW_METHODS)
      .header('access-control-allow-headers', ALLOW_HEADERS)
      .header('access-control-max-age', MAX_AGE)
      .send();
    return true;
  };
}
