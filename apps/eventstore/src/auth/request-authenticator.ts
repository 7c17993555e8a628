import { Inject, Injectable } from '@nestjs/common';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { TokenMatcher, type ApiToken, type Scope } from './api-token.js';
import { JwtVerifier, looksLikeJwt } from './jwt/jwt-verifier.js';
import { principalLabel, type Principal } from './principal.js';
import { MissingScopeException, TokenRefusedException } from './token-refused.exception.js';

/** A static token's principal. */
export function tokenPrincipal(token: ApiToken): Principal {
  return {
    kind: 'token',
    name: token.name,
    scopes: token.scopes,
    groups: [],
    ...(token.tenant === undefined ? {} : { tenant: token.tenant }),
  };
}

/**
 * The bearer-token check of every route: the guard runs it for each request, and the
 * early-authentication hook runs the same check on the headers of a request with a body,
 * before the body is read. A static token (ORDINAL_TOKENS) is matched first; otherwise, when
 * ORDINAL_JWT_JWKS_URL is set, a JWT is verified. Throws 401 `invalid_token` with a reason, or
 * 403 `missing_scope`.
 */
@Injectable()
export class RequestAuthenticator {
  private readonly matcher: TokenMatcher;
  private readonly principals = new Map<ApiToken, Principal>();
  private readonly jwt: JwtVerifier | null;
  private readonly maxTokenBytes: number;

  constructor(@Inject(ORDINAL_CONFIG) config: OrdinalConfig) {
    this.matcher = new TokenMatcher(config.tokens);
    for (const token of config.tokens) this.principals.set(token, tokenPrincipal(token));
    this.jwt = config.jwt ? new JwtVerifier(config.jwt) : null;
    this.maxTokenBytes = config.jwt?.maxTokenBytes ?? 8192;
  }

  /** The principal of an `Authorization: Bearer <token>` header, holding `scope` when one is given. */
  async authorise(header: string | undefined, scope: Scope | undefined): Promise<Principal> {
    return this.authoriseNow(header, scope);
  }

  /**
   * `authorise`, answering at once where it can: a static token's principal (or its refusal,
   * thrown) needs no waiting, only a JWT's keys may. The early-authentication step lets the
   * request go on in the same turn when it gets a principal here.
   */
  authoriseNow(
    header: string | undefined,
    scope: Scope | undefined,
  ): Principal | Promise<Principal> {
    const principal = this.authenticate(header);
    return principal instanceof Promise
      ? principal.then((p) => this.withScope(p, scope))
      : this.withScope(principal, scope);
  }

  private withScope(principal: Principal, scope: Scope | undefined): Principal {
    if (scope && !principal.scopes.has(scope))
      throw new MissingScopeException(
        `${principalLabel(principal)} lacks the '${scope}' scope`,
        principal,
      );
    return principal;
  }

  private authenticate(header: string | undefined): Principal | Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match)
      throw new TokenRefusedException(
        'missing',
        'Missing bearer token: send Authorization: Bearer <token>',
      );
    const secret = match[1];
    if (secret.length > this.maxTokenBytes)
      throw new TokenRefusedException(
        'too_large',
        `Bearer token longer than ${this.maxTokenBytes} bytes`,
      );
    const token = this.matcher.match(secret);
    if (token) return this.principals.get(token)!;
    if (this.jwt && looksLikeJwt(secret)) return this.jwt.verify(secret);
    throw new TokenRefusedException('unknown_token', 'Invalid bearer token');
  }
}
