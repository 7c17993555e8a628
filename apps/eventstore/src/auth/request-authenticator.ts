import { ForbiddenException, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { TokenMatcher, type ApiToken, type Scope } from './api-token.js';

/**
 * The bearer-token check of every route: the guard runs it for each request, and the
 * early-authentication hook runs the same check on the headers of a request with a body,
 * before the body is read. Throws 401 (no or unknown token) or 403 (the scope is missing).
 */
@Injectable()
export class RequestAuthenticator {
  private readonly matcher: TokenMatcher;

  constructor(@Inject(ORDINAL_CONFIG) config: OrdinalConfig) {
    this.matcher = new TokenMatcher(config.tokens);
  }

  /** The token of an `Authorization: Bearer <token>` header, holding `scope` when one is given. */
  authorise(header: string | undefined, scope: Scope | undefined): ApiToken {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match)
      throw new UnauthorizedException('Missing bearer token: send Authorization: Bearer <token>');
    const token = this.matcher.match(match[1]);
    if (!token) throw new UnauthorizedException('Invalid bearer token');
    if (scope && !token.scopes.has(scope))
      throw new ForbiddenException(`Token '${token.name}' lacks the '${scope}' scope`);
    return token;
  }
}
