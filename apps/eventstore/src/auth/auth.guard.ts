import {
  Injectable,
  type CanActivate,
  type ExecutionContext,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RequestAuthenticator } from './request-authenticator.js';
import { principalLabel, type Principal } from './principal.js';
import { MissingScopeException } from './token-refused.exception.js';
import { AcceptsTicket, Public, RequireScope, RouteTenancy } from './scopes.decorator.js';
import { StreamTickets } from './stream-tickets.service.js';
import type { HttpErrorCode } from '@ordinal/contract';
import type { Scope } from './api-token.js';
import { requestTenant, type Tenancy } from './tenancy.js';

/** A route's handler and its controller, as Nest's ExecutionContext gives them. */
type RouteHandler = ReturnType<ExecutionContext['getHandler']>;
type RouteController = ReturnType<ExecutionContext['getClass']>;

/** What a route's decorators ask of a request; read once per route, not per request. */
interface RouteAccess {
  isPublic: boolean;
  scope: Scope | undefined;
  acceptsTicket: boolean;
  tenancy: Tenancy | undefined;
}

/**
 * The request as the guard leaves it: the principal it was authorised for, and the tenant it
 * acts for, for routes that need to know.
 */
export interface AuthorisedRequest {
  headers: Record<string, string | undefined>;
  query?: Record<string, unknown>;
  principal?: Principal;
  /**
   * The tenant the request acts for (docs/tenants.md), on a route per tenant; undefined: none
   * (every tenant's messages, for a principal of no tenant).
   */
  tenant?: string;
}

/**
 * Every route needs `Authorization: Bearer <token>` unless marked `@Public()`; a route with
 * `@RequireScope(s)` also needs that scope. Then the request's tenant (`requestTenant`): the
 * principal's, or the one a trusted principal names, on a route per tenant; none on an
 * operator's route, which a principal bound to a tenant may not use. The token itself is never
 * logged.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly routes = new WeakMap<RouteController, WeakMap<RouteHandler, RouteAccess>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly tickets: StreamTickets,
    private readonly authenticator: RequestAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.accessOf(context.getHandler(), context.getClass());
    if (access.isPublic) return true;
    const request = context.switchToHttp().getRequest<AuthorisedRequest>();
    try {
      // The early-authentication hook may have authorised a request with a body already.
      request.principal ??= await this.principalOf(request, access);
    } catch (error) {
      // Known but without the scope: the audit trail names who was refused.
      if (error instanceof MissingScopeException) request.principal = error.principal;
      throw error;
    }
    request.tenant = requestTenant(request, request.principal, access.tenancy);
    return true;
  }

  /**
   * The bearer token holding the route's scope, or (where the route accepts one and no header
   * is sent) a stream ticket's.
   */
  private async principalOf(request: AuthorisedRequest, access: RouteAccess): Promise<Principal> {
    const header = request.headers.authorization;
    const ticket = request.query?.ticket;
    if (header === undefined && access.acceptsTicket && ticket !== undefined) {
      const token = typeof ticket === 'string' ? await this.tickets.redeem(ticket) : null;
      if (!token)
        throw new UnauthorizedException({
          message:
            'Invalid, expired or used stream ticket: get a new one from POST /api/events/stream-ticket',
          code: 'invalid_stream_ticket' satisfies HttpErrorCode,
        });
      if (access.scope && !token.scopes.has(access.scope))
        throw new MissingScopeException(
          `${principalLabel(token)} lacks the '${access.scope}' scope`,
          token,
        );
      return token;
    }
    return this.authenticator.authorise(header, access.scope);
  }

  private accessOf(handler: RouteHandler, controller: RouteController): RouteAccess {
    let byHandler = this.routes.get(controller);
    if (!byHandler) this.routes.set(controller, (byHandler = new WeakMap()));
    let access = byHandler.get(handler);
    if (!access) {
      const targets = [handler, controller];
      access = {
        isPublic: Boolean(this.reflector.getAllAndOverride(Public, targets)),
        scope: this.reflector.getAllAndOverride(RequireScope, targets),
        acceptsTicket: Boolean(this.reflector.getAllAndOverride(AcceptsTicket, targets)),
        tenancy: this.reflector.getAllAndOverride(RouteTenancy, targets),
      };
      byHandler.set(handler, access);
    }
    return access;
  }
}
