import { hash, timingSafeEqual } from 'node:crypto';
import { isTenantId } from '@ordinal/log';

/**
 * What a principal may do. `tenants`: a principal bound to no tenant may act for any tenant it
 * names in the `Ordinal-Tenant` header (docs/tenants.md), a trusted backend's scope.
 */
export type Scope = 'read' | 'write' | 'admin' | 'personal' | 'tenants';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin', 'personal', 'tenants'];

/** A bearer token the server accepts, with its scopes and the tenant it is bound to, if any. */
export interface ApiToken {
  name: string;
  secret: string;
  scopes: Set<Scope>;
  /** The tenant every request of the token acts for (the entry's fourth field; docs/tenants.md). */
  tenant?: string;
}

/**
 * Parses `name:secret:scope+scope[:tenant];name2:secret2:scope`. Throws naming the bad entry.
 * A token bound to a tenant cannot have the `tenants` scope (it could never use it).
 */
export function parseTokens(spec: string): ApiToken[] {
  const tokens: ApiToken[] = [];
  for (const entry of spec
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, secret, scopeList, tenant, ...rest] = entry.split(':');
    if (!name || !secret || !scopeList || tenant === '' || rest.length > 0) {
      throw new Error(
        `ORDINAL_TOKENS entry #${tokens.length + 1} must be name:secret:scope+scope or name:secret:scope+scope:tenant`,
      );
    }
    const scopes = scopeList.split('+').map((s) => s.trim());
    const unknown = scopes.filter((s) => !SCOPES.includes(s as Scope));
    if (unknown.length > 0)
      throw new Error(`ORDINAL_TOKENS entry '${name}' has unknown scopes: ${unknown.join(', ')}`);
    if (tenant !== undefined && !isTenantId(tenant))
      throw new Error(
        `ORDINAL_TOKENS entry '${name}' has a tenant that is not a tenant id (1-63 letters, digits, '_' or '.', starting with a letter or digit)`,
      );
    if (tenant !== undefined && scopes.includes('tenants'))
      throw new Error(
        `ORDINAL_TOKENS entry '${name}' is bound to tenant '${tenant}' and has the tenants scope: a tenant's token cannot act for another tenant; drop one`,
      );
    tokens.push({
      name,
      secret,
      scopes: new Set(scopes as Scope[]),
      ...(tenant === undefined ? {} : { tenant }),
    });
  }
  return tokens;
}

const digest = (value: string) => hash('sha256', value, 'buffer');

/** Secrets already matched are remembered up to this many (the set is cleared when full). */
const VERIFIED_LIMIT = 1024;

/**
 * Finds the token a presented secret belongs to. Compares digests in constant time and
 * always checks every token, so timing reveals neither a match nor its position. A secret
 * that matched is remembered (tokens are fixed for the process's life), so a client's
 * every request after its first is one map lookup instead of a SHA-256: only a valid secret
 * is ever remembered, so the shortcut tells a caller nothing it does not already know.
 */
export class TokenMatcher {
  private readonly digests: { token: ApiToken; digest: Buffer }[];
  private readonly verified = new Map<string, ApiToken>();

  constructor(tokens: ApiToken[]) {
    this.digests = tokens.map((token) => ({ token, digest: digest(token.secret) }));
  }

  match(secret: string): ApiToken | null {
    const known = this.verified.get(secret);
    if (known) return known;
    const presented = digest(secret);
    let found: ApiToken | null = null;
    for (const { token, digest: d } of this.digests) {
      if (timingSafeEqual(presented, d)) found = token;
    }
    if (found) {
      if (this.verified.size >= VERIFIED_LIMIT) this.verified.clear();
      this.verified.set(secret, found);
    }
    return found;
  }
}
