import { Logger } from '@nestjs/common';
import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { isTenantId } from '@ordinal/log';
import { SCOPES, type Scope } from '../api-token.js';
import type { Principal } from '../principal.js';
import { TokenRefusedException, type TokenRefusalReason } from '../token-refused.exception.js';
import type { JwtConfig } from './jwt-config.js';
import { jwksSource } from './jwks-source.js';

/** Verified tokens remembered up to this many (cleared when full), each until its expiry. */
const VERIFIED_LIMIT = 4096;

/** True when a bearer value has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token);
}

/** The words of a scope claim: space-separated text, or an array of strings. */
function words(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/**
 * Verifies JWT bearer tokens with jose against the configured key set: signature with an
 * allowed asymmetric algorithm only, `iss`, `aud`, `exp` (required) and `nbf` with the clock
 * skew. A token that verified is remembered until its expiry, so a client's later requests
 * cost one map lookup instead of a signature check. Refusals are 401 `invalid_token` with a
 * reason; nothing here logs a token or its signature.
 */
export class JwtVerifier {
  private readonly logger = new Logger(JwtVerifier.name);
  private readonly keys: JWTVerifyGetKey;
  private readonly verified = new Map<string, { principal: Principal; notBefore: number }>();

  constructor(
    private readonly config: JwtConfig,
    keys?: JWTVerifyGetKey,
  ) {
    this.keys = keys ?? jwksSource(config);
  }

  /** The principal a JWT stands for; throws TokenRefusedException. */
  async verify(token: string): Promise<Principal> {
    if (token.length > this.config.maxTokenBytes)
      throw new TokenRefusedException(
        'too_large',
        `Bearer token longer than ${this.config.maxTokenBytes} bytes (ORDINAL_JWT_MAX_BYTES)`,
      );
    const now = Date.now();
    const known = this.verified.get(token);
    const skewMs = this.config.clockSkewSeconds * 1000;
    if (known && known.principal.expiresAt! + skewMs > now && known.notBefore - skewMs <= now)
      return known.principal;
    if (known) this.verified.delete(token);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        algorithms: this.config.algorithms,
        issuer: this.config.issuer,
        audience: this.config.audience,
        clockTolerance: this.config.clockSkewSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw this.refusal(error);
    }
    const principal = this.principalOf(payload);
    if (this.verified.size >= VERIFIED_LIMIT) this.verified.clear();
    this.verified.set(token, { principal, notBefore: (payload.nbf ?? 0) * 1000 });
    return principal;
  }

  private principalOf(payload: JWTPayload): Principal {
    const claims = payload as Record<string, unknown>;
    const subject = claims[this.config.subjectClaim];
    if (typeof subject !== 'string' || subject === '')
      throw new TokenRefusedException(
        'claims',
        `JWT has no '${this.config.subjectClaim}' claim naming its principal (ORDINAL_JWT_SUBJECT_CLAIM)`,
      );
    const claim = this.config.scopeClaim ?? (claims.scope !== undefined ? 'scope' : 'scp');
    const prefix = this.config.scopePrefix;
    const scopes = new Set<Scope>();
    for (const word of words(claims[claim])) {
      if (!word.startsWith(prefix)) continue;
      const scope = word.slice(prefix.length);
      if (SCOPES.includes(scope as Scope)) scopes.add(scope as Scope);
    }
    // The tenant claim: absent, no tenant; anything but a tenant id refuses the token (a
    // malformed claim must never read as "no tenant", which sees every tenant).
    const tenant = claims[this.config.tenantClaim];
    if (tenant !== undefined && !isTenantId(tenant))
      throw new TokenRefusedException(
        'claims',
        `JWT's '${this.config.tenantClaim}' claim is not a tenant id (1-63 letters, digits, '_' or '.', starting with a letter or digit; ORDINAL_JWT_TENANT_CLAIM)`,
      );
    return {
      kind: 'jwt',
      name: subject,
      scopes,
      groups: words(claims[this.config.groupsClaim]),
      expiresAt: payload.exp! * 1000,
      ...(tenant === undefined ? {} : { tenant }),
    };
  }

  /** The 401 for a jose error (its message names the failed check, never the token). */
  private refusal(error: unknown): TokenRefusedException {
    if (error instanceof TokenRefusedException) return error;
    const reason = ((): TokenRefusalReason | null => {
      if (error instanceof errors.JWTExpired) return 'expired';
      if (error instanceof errors.JWTClaimValidationFailed) {
        if (error.claim === 'nbf') return 'not_yet_valid';
        if (error.claim === 'iss') return 'issuer';
        if (error.claim === 'aud') return 'audience';
        return 'claims';
      }
      if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm';
      if (error instanceof errors.JWKSNoMatchingKey) return 'unknown_key';
      if (error instanceof errors.JWKSMultipleMatchingKeys) return 'unknown_key';
      if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature';
      if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
        return 'malformed';
      if (error instanceof errors.JOSENotSupported) return 'algorithm';
      return null;
    })();
    if (reason)
      return new TokenRefusedException(reason, `JWT refused: ${(error as Error).message}`);
    // The key set could not be read (network, file, bad JSON): the operator's problem, logged.
    this.logger.warn(
      `The JWT key set ${this.config.jwksUrl.href} could not be read: ${(error as Error).message}`,
    );
    return new TokenRefusedException(
      'keys_unavailable',
      'JWT refused: the key set could not be read; retry later',
    );
  }
}
