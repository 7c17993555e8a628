/** The signature algorithms a JWT may use: asymmetric only (never `none`, never HMAC). */
export const JWT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** JWT bearer tokens (docs/security.md): on when ORDINAL_JWT_JWKS_URL is set. */
export interface JwtConfig {
  /** The identity provider's key set: an `https:` URL, or a `file:` URL (ORDINAL_JWT_JWKS_URL). */
  jwksUrl: URL;
  /** The `iss` every token must carry (ORDINAL_JWT_ISSUER). */
  issuer: string;
  /** The `aud` every token must carry (ORDINAL_JWT_AUDIENCE). */
  audience: string;
  /** ORDINAL_JWT_ALGORITHMS, comma-separated. @default ['RS256', 'ES256', 'EdDSA'] */
  algorithms: JwtAlgorithm[];
  /** Seconds of clock difference allowed on `exp` and `nbf` (ORDINAL_JWT_CLOCK_SKEW_SECONDS). @default 30 */
  clockSkewSeconds: number;
  /**
   * The claim holding the token's scopes (ORDINAL_JWT_SCOPE_CLAIM): space-separated words or an
   * array. @default null: `scope` (words), else `scp` (array or words)
   */
  scopeClaim: string | null;
  /** Only scope words with this prefix count, without it (ORDINAL_JWT_SCOPE_PREFIX, e.g. `ordinal:`). @default '' */
  scopePrefix: string;
  /** The claim naming the principal (ORDINAL_JWT_SUBJECT_CLAIM). @default 'sub' */
  subjectClaim: string;
  /** The claim holding the principal's groups, matched by access rules (ORDINAL_JWT_GROUPS_CLAIM). @default 'groups' */
  groupsClaim: string;
  /**
   * The claim naming the principal's tenant (ORDINAL_JWT_TENANT_CLAIM; docs/tenants.md): absent
   * from a token, the principal has no tenant; present, it must be a tenant id. @default 'tenant'
   */
  tenantClaim: string;
  /** A bearer token longer than this is refused unread (ORDINAL_JWT_MAX_BYTES). @default 8192 */
  maxTokenBytes: number;
  /** An unknown `kid` re-reads the key set at most this often (ms, ORDINAL_JWT_JWKS_COOLDOWN_MS). @default 30000 */
  jwksCooldownMs: number;
  /** The key set is re-read when older than this (ms, ORDINAL_JWT_JWKS_MAX_AGE_MS). @default 600000 */
  jwksMaxAgeMs: number;
}

type Env = Record<string, string | undefined>;

function intOf(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  return n;
}

/**
 * The JWT settings of the environment, or null when ORDINAL_JWT_JWKS_URL is unset. Throws
 * (a plain Error naming the variable; the caller wraps it) on a setting it refuses.
 */
export function loadJwtConfig(env: Env): JwtConfig | null {
  const raw = env.ORDINAL_JWT_JWKS_URL;
  if (!raw) {
    const stray = Object.keys(env).filter((k) => k.startsWith('ORDINAL_JWT_') && env[k]);
    if (stray.length > 0)
      throw new Error(
        `${stray.join(', ')} set without ORDINAL_JWT_JWKS_URL: set the key set's URL too`,
      );
    return null;
  }
  let jwksUrl: URL;
  try {
    jwksUrl = new URL(raw);
  } catch {
    throw new Error(`ORDINAL_JWT_JWKS_URL must be an https: or file: URL, got '${raw}'`);
  }
  if (jwksUrl.protocol !== 'https:' && jwksUrl.protocol !== 'file:')
    throw new Error(
      `ORDINAL_JWT_JWKS_URL must be an https: or file: URL (keys over plain http could be replaced on the way), got '${jwksUrl.protocol}'`,
    );
  const issuer = env.ORDINAL_JWT_ISSUER;
  const audience = env.ORDINAL_JWT_AUDIENCE;
  if (!issuer || !audience)
    throw new Error(
      'ORDINAL_JWT_JWKS_URL needs ORDINAL_JWT_ISSUER and ORDINAL_JWT_AUDIENCE: a token is accepted only from your issuer, for this server',
    );
  const algorithms = (env.ORDINAL_JWT_ALGORITHMS || JWT_ALGORITHMS.join(','))
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const refused = algorithms.filter((a) => !JWT_ALGORITHMS.includes(a as JwtAlgorithm));
  if (refused.length > 0 || algorithms.length === 0)
    throw new Error(
      `ORDINAL_JWT_ALGORITHMS may list only ${JWT_ALGORITHMS.join(', ')} (never none, never HMAC); refused: ${refused.join(', ') || '(empty)'}`,
    );
  return {
    jwksUrl,
    issuer,
    audience,
    algorithms: algorithms as JwtAlgorithm[],
    clockSkewSeconds: intOf(env, 'ORDINAL_JWT_CLOCK_SKEW_SECONDS', 30, 0, 300),
    scopeClaim: env.ORDINAL_JWT_SCOPE_CLAIM || null,
    scopePrefix: env.ORDINAL_JWT_SCOPE_PREFIX ?? '',
    subjectClaim: env.ORDINAL_JWT_SUBJECT_CLAIM || 'sub',
    groupsClaim: env.ORDINAL_JWT_GROUPS_CLAIM || 'groups',
    tenantClaim: env.ORDINAL_JWT_TENANT_CLAIM || 'tenant',
    maxTokenBytes: intOf(env, 'ORDINAL_JWT_MAX_BYTES', 8192, 256, 65_536),
    jwksCooldownMs: intOf(env, 'ORDINAL_JWT_JWKS_COOLDOWN_MS', 30_000, 0, 86_400_000),
    jwksMaxAgeMs: intOf(env, 'ORDINAL_JWT_JWKS_MAX_AGE_MS', 600_000, 1000, 86_400_000),
  };
}
