import { HttpException } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorBody } from '../errors/error-body.js';
import type { AuthorisedRequest } from './auth.guard.js';
import type { RequestAuthenticator } from './request-authenticator.js';
import { ROUTE_SCOPE, type ScopedRouteConfig } from './route-access.js';

/** True when the request announces a body (a length above 0, or a chunked one). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
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
  fastify.addHook('onRequest', (request, reply, done) => {
    const scope = (request.routeOptions.config as ScopedRouteConfig)[ROUTE_SCOPE];
    if (scope === undefined || !hasBody(request)) return done();
    try {
      (request as unknown as AuthorisedRequest).apiToken = authenticator.authorise(
        request.headers.authorization,
        scope,
      );
      return done();
    } catch (error) {
      if (!(error instanceof HttpException)) return done(error as Error);
      const status = error.getStatus();
      // `connection: close`: Node ends the connection once the answer is out; the unread body is discarded.
      void reply.code(status).header('connection', 'close').send(errorBody(status, error.message));
    }
  });
}
