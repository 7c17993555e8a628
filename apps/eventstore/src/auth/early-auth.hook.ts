import { HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FinalRequestStep } from '../http/request-gate.js';
import type { Principal } from './principal.js';
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
export function earlyAuth(authenticator: RequestAuthenticator): FinalRequestStep {
  const refused = (request: FastifyRequest, reply: FastifyReply, error: unknown): Error | null => {
    if (!(error instanceof HttpException)) return error as Error;
    if (error instanceof MissingScopeException)
      (request as unknown as AuthorisedRequest).principal = error.principal;
    // `connection: close`: Node ends the connection once the answer is out; the unread body is discarded.
    void reply.code(error.getStatus()).header('connection', 'close').send(bodyOf(error));
    return null;
  };
  return (request, reply, route, done) => {
    const scope = (route as ScopedRouteConfig)[ROUTE_SCOPE];
    if (scope === undefined || !hasBody(request)) return done();
    let principal: Principal | Promise<Principal>;
    try {
      principal = authenticator.authoriseNow(request.headers.authorization, scope);
    } catch (error) {
      const unexpected = refused(request, reply, error);
      return unexpected ? done(unexpected) : undefined;
    }
    if (!(principal instanceof Promise)) {
      (request as unknown as AuthorisedRequest).principal = principal;
      return done();
    }
    principal.then(
      (p) => {
        (request as unknown as AuthorisedRequest).principal = p;
        done();
      },
      (error: unknown) => {
        const unexpected = refused(request, reply, error);
        if (unexpected) done(unexpected);
      },
    );
  };
}
