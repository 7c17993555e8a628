import { HttpException } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorBody } from '../errors/error-body.js';
import type { AuthorisedRequest } from './auth.guard.js';
import type { RequestAuthenticator } from './request-authenticator.js';
import { ROUTE_SCOPE, type ScopedRouteConfig } from './route-access.js';
import { MissingScopeException } from './token-refused.exception.js';

/** True when the request announces a body (a length above 0, or a chunked one). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}

/** The body of an HttpException's answer, as the exception filter would render it. */
function bodyOf(error: HttpException) {
  const response = error.getResponse();
  const {
    message: _m,
    statusCode: _s,
    error: _e,
    ...extra
  } = typeof response === 'object' && response !== null
    ? (response as Record<string, unknown>)
    : {};
  return errorBody(error.getStatus(), error.message, extra);
}

/**
 * Authenticates a request that carries a body on its headers, before the body is read: a
 * request to a scoped route (`Scoped`) without a valid token, or without the scope, is answered
 * 401 or 403 as the guard would answer it, and its connection is closed, so the server never
 * buffers (or parses, or imports) a body nobody was allowed to send. Requests without a body
 * are left to the guard, which runs the same check (`RequestAuthenticator`).
 */
export function registerEarlyAuth(
  fastify: FastifyInstance,
  authenticator: RequestAuthenticator,
): void {
  fastify.addHook('onRequest', async (request, reply) => {
    const scope = (request.routeOptions.config as ScopedRouteConfig)[ROUTE_SCOPE];
    if (scope === undefined || !hasBody(request)) return;
    try {
      (request as unknown as AuthorisedRequest).principal = await authenticator.authorise(
        request.headers.authorization,
        scope,
      );
    } catch (error) {
      if (!(error instanceof HttpException)) throw error;
      if (error instanceof MissingScopeException)
        (request as unknown as AuthorisedRequest).principal = error.principal;
      // `connection: close`: Node ends the connection once the answer is out; the unread body is discarded.
      return reply.code(error.getStatus()).header('connection', 'close').send(bodyOf(error));
    }
  });
}
