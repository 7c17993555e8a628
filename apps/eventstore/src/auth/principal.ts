import type { Scope } from './api-token.js';

/**
 * Who a request acts for, as the guard leaves it on the request: a static token from
 * ORDINAL_TOKENS (`kind: 'token'`, named by the token's name) or a verified JWT (`kind: 'jwt'`,
 * named by its subject claim). Access rules match `name` and `groups`; routes check `scopes`.
 */
export interface Principal {
  kind: 'token' | 'jwt';
  /** The token's name, or the JWT's subject. */
  name: string;
  scopes: ReadonlySet<Scope>;
  /** The JWT's groups claim (ORDINAL_JWT_GROUPS_CLAIM); empty for a static token. */
  groups: readonly string[];
  /** A JWT's expiry (epoch ms); a stream ticket issued to it expires no later. */
  expiresAt?: number;
  /**
   * The tenant the principal is bound to (a static token's fourth field, a JWT's tenant claim,
   * a stream ticket's): every request it makes acts for that tenant and no other
   * (docs/tenants.md). Absent: a principal of no tenant, which sees every tenant's messages
   * and, with the `tenants` scope, may act for one it names in `Ordinal-Tenant`.
   */
  tenant?: string;
}

/** How a principal is named in logs, audit records and 403 messages: `token:NAME` or `jwt:SUBJECT`. */
export function principalLabel(principal: Pick<Principal, 'kind' | 'name'>): string {
  return `${principal.kind}:${principal.name}`;
}
