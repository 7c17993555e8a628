import { ForbiddenException, UnauthorizedException } from '@nestjs/common';
import type { HttpErrorCode } from '@ordinal/contract';
import type { Principal } from './principal.js';

/**
 * Why a bearer token was refused: the `reason` of a 401 `invalid_token` answer
 * (docs/security.md lists each). Stable: a client may switch on it.
 */
export const TOKEN_REFUSAL_REASONS = [
  'missing',
  'unknown_token',
  'malformed',
  'too_large',
  'algorithm',
  'unknown_key',
  'signature',
  'expired',
  'not_yet_valid',
  'issuer',
  'audience',
  'claims',
  'keys_unavailable',
] as const;
export type TokenRefusalReason = (typeof TOKEN_REFUSAL_REASONS)[number];

/** 401 `invalid_token` with its reason. The message never quotes the token. */
export class TokenRefusedException extends UnauthorizedException {
  constructor(
    readonly reason: TokenRefusalReason,
    message: string,
  ) {
    super({ message, code: 'invalid_token' satisfies HttpErrorCode, reason });
  }
}

/** 403 `missing_scope`: the principal is known but lacks the route's scope. */
export class MissingScopeException extends ForbiddenException {
  constructor(
    message: string,
    /** Who was refused (the audit trail names it). */
    readonly principal: Principal,
  ) {
    super({ message, code: 'missing_scope' satisfies HttpErrorCode });
  }
}
