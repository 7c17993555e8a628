import { Injectable, type CanActivate, type ExecutionContext, UnauthorizedException, ForbiddenException, Inject } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { TokenMatcher } from './api-token.js';
import { Public, RequireScope } from './scopes.decorator.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';

/**
 * Every route needs `Authorization: Bearer <token>` unless marked `@Public()`; a route with
 * `@RequireScope(s)` also needs that scope. The token itself is never logged.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly matcher: TokenMatcher;

  constructor(
    private readonly reflector: Reflector,
    @Inject(ORDINAL_CONFIG) config: OrdinalConfig,
  ) {
    this.matcher = new TokenMatcher(config.tokens);
  }

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride(Public, targets)) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new UnauthorizedException('Missing bearer token: send Authorization: Bearer <token>');
    const token = this.matcher.match(match[1]);
    if (!token) throw new UnauthorizedException('Invalid bearer token');
    const scope = this.reflector.getAllAndOverride(RequireScope, targets);
    if (scope && !token.scopes.has(scope)) {
      throw new ForbiddenException(`Token '${token.name}' lacks the '${scope}' scope`);
    }
    return true;
  }
}
