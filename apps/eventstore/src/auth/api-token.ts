import { hash, timingSafeEqual } from 'node:crypto';

export type Scope = 'read' | 'write' | 'admin' | 'personal';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin', 'personal'];

/** A bearer token the server accepts, with its scopes. */
export interface ApiToken {
  name: string;
  secret: string;
  scopes: Set<Scope>;
}

/** Parses `name:secret:scope+scope;name2:secret2:scope`. Throws naming the bad entry. */
export function parseTokens(spec: string): ApiToken[] {
  const tokens: ApiToken[] = [];
  for (const entry of spec
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, secret, scopeList, ...rest] = entry.split(':');
    if (!name || !secret || !scopeList || rest.length > 0) {
      throw new Error(`ORDINAL_TOKENS entry #${tokens.length + 1} must be name:secret:scope+scope`);
    }
    const scopes = scopeList.split('+').map((s) => s.trim());
    const unknown = scopes.filter((s) => !SCOPES.includes(s as Scope));
    if (unknown.length > 0)
      throw new Error(`ORDINAL_TOKENS entry '${name}' has unknown scopes: ${unknown.join(', ')}`);
    tokens.push({ name, secret, scopes: new Set(scopes as Scope[]) });
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
