import {
  Injectable,
  type CanActivate,
  type ExecutionContext,
  UnauthorizedException,
  ForbiddenException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RequestAuthenticator } from './request-authenticator.js';
import { AcceptsTicket, Public, RequireScope } from './scopes.decorator.js';
import { StreamTickets } from './stream-tickets.service.js';
import type { ApiToken, Scope } from './api-token.js';

/** A route's handler and its controller, as Nest's ExecutionContext gives them. */
type RouteHandler = ReturnType<ExecutionContext['getHandler']>;
type RouteController = ReturnType<ExecutionContext['getClass']>;

/** What a route's decorators ask of a request; read once per route, not per request. */
interface RouteAccess {
  isPublic: boolean;
  scope: Scope | undefined;
  acceptsTicket: boolean;
}

/** The request as the guard leaves it: the token it was authorised with, for routes that need to know. */
export interface AuthorisedRequest {
  headers: Record<string, string | undefined>;
  query?: Record<string, unknown>;
  apiToken?: ApiToken;
}

/**
 * Every route needs `Authorization: Bearer <token>` unless marked `@Public()`; a route with
 * `@RequireScope(s)` also needs that scope. The token itself is never logged.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly routes = new WeakMap<RouteController, WeakMap<RouteHandler, RouteAccess>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly tickets: StreamTickets,
    private readonly authenticator: RequestAuthenticator,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const access = this.accessOf(context.getHandler(), context.getClass());
    if (access.isPublic) return true;
    const request = context.switchToHttp().getRequest<AuthorisedRequest>();
    request.apiToken = this.tokenOf(request, access);
    return true;
  }

  /**
   * The bearer token holding the route's scope, or (where the route accepts one and no header
   * is sent) a stream ticket's.
   */
  private tokenOf(request: AuthorisedRequest, access: RouteAccess): ApiToken {
    const header = request.headers.authorization;
    const ticket = request.query?.ticket;
    if (header === undefined && access.acceptsTicket && ticket !== undefined) {
      const token = typeof ticket === 'string' ? this.tickets.redeem(ticket) : null;
      if (!token)
        throw new UnauthorizedException(
          'Invalid, expired or used stream ticket: get a new one from POST /api/events/stream-ticket',
        );
      if (access.scope && !token.scopes.has(access.scope))
        throw new ForbiddenException(`Token '${token.name}' lacks the '${access.scope}' scope`);
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
      };
      byHandler.set(handler, access);
    }
    return access;
  }
}
