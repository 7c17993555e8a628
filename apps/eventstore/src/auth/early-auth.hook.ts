import { HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FinalRequestStep } from '../http/request-gate.js';
import type { Principal } from './principal.js';
import { errorBody } from '../errors/error-body.js';
import type { AuthorisedRequest } from './auth.guard.js';
import type { RequestAuthenticator } from './request-authenticator.js';
import { ROUTE_SCOPE, ROUTE_TENANCY, type ScopedRouteConfig } from './route-access.js';
import { MissingScopeException } from './token-refused.exception.js';
import { requestTenant, TenantForbiddenException } from './tenancy.js';

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
 * request to a scoped route (`Scoped`) without a valid token, without the scope, or for a
 * tenant the principal may not act for, is answered 401, 403 (or 400 for a malformed
 * `Ordinal-Tenant`) as the guard would answer it, and its connection is closed, so the server
 * never buffers (or parses, or imports) a body nobody was allowed to send. Requests without a
 * body are left to the guard, which runs the same checks (`RequestAuthenticator`,
 * `requestTenant`).
 */
export function earlyAuth(authenticator: RequestAuthenticator): FinalRequestStep {
  const refused = (request: FastifyRequest, reply: FastifyReply, error: unknown): Error | null => {
    if (!(error instanceof HttpException)) return error as Error;
    if (error instanceof MissingScopeException || error instanceof TenantForbiddenException)
      (request as unknown as AuthorisedRequest).principal = error.principal;
    // `connection: close`: Node ends the connection once the answer is out; the unread body is discarded.
    void reply.code(error.getStatus()).header('connection', 'close').send(bodyOf(error));
    return null;
  };
  return (request, reply, route, done) => {
    const scope = (route as ScopedRouteConfig)[ROUTE_SCOPE];
    if (scope === undefined || !hasBody(request)) return done();
    const tenancy = (route as ScopedRouteConfig)[ROUTE_TENANCY];
    // The guard sets the request's tenant; here the tenant is only checked.
    const authorised = (p: Principal) => {
      requestTenant(request, p, tenancy);
      (request as unknown as AuthorisedRequest).principal = p;
    };
    let principal: Principal | Promise<Principal>;
    try {
      principal = authenticator.authoriseNow(request.headers.authorization, scope);
      if (!(principal instanceof Promise)) authorised(principal);
    } catch (error) {
      const unexpected = refused(request, reply, error);
      return unexpected ? done(unexpected) : undefined;
    }
    if (!(principal instanceof Promise)) return done();
    principal.then(
      (p) => {
        try {
          authorised(p);
        } catch (error) {
          const unexpected = refused(request, reply, error);
          return unexpected ? done(unexpected) : undefined;
        }
        done();
      },
      (error: unknown) => {
        const unexpected = refused(request, reply, error);
        if (unexpected) done(unexpected);
      },
    );
  };
}
