import {
  Injectable,
  type CanActivate,
  type ExecutionContext,
  UnauthorizedException,
  ForbiddenException,
  Inject,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { TokenMatcher } from './api-token.js';
import { AcceptsTicket, Public, RequireScope } from './scopes.decorator.js';
import { StreamTickets } from './stream-tickets.service.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
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
  private readonly matcher: TokenMatcher;
  private readonly routes = new WeakMap<RouteController, WeakMap<RouteHandler, RouteAccess>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly tickets: StreamTickets,
    @Inject(ORDINAL_CONFIG) config: OrdinalConfig,
  ) {
    this.matcher = new TokenMatcher(config.tokens);
  }

  canActivate(context: ExecutionContext): boolean {
    const access = this.accessOf(context.getHandler(), context.getClass());
    if (access.isPublic) return true;
    const request = context.switchToHttp().getRequest<AuthorisedRequest>();
    const token = this.tokenOf(request, access);
    const { scope } = access;
    if (scope && !token.scopes.has(scope)) {
      throw new ForbiddenException(`Token '${token.name}' lacks the '${scope}' scope`);
    }
    request.apiToken = token;
    return true;
  }

  /** The bearer token, or (where the route accepts one and no header is sent) a stream ticket's. */
  private tokenOf(request: AuthorisedRequest, access: RouteAccess): ApiToken {
    const header = request.headers.authorization;
    const ticket = request.query?.ticket;
    if (header === undefined && access.acceptsTicket && ticket !== undefined) {
      const token = typeof ticket === 'string' ? this.tickets.redeem(ticket) : null;
      if (!token)
        throw new UnauthorizedException(
          'Invalid, expired or used stream ticket: get a new one from POST /api/events/stream-ticket',
        );
      return token;
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match)
      throw new UnauthorizedException('Missing bearer token: send Authorization: Bearer <token>');
    const token = this.matcher.match(match[1]);
    if (!token) throw new UnauthorizedException('Invalid bearer token');
    return token;
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
