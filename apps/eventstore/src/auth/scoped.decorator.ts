import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import type { Scope } from './api-token.js';
import { RequireScope } from './scopes.decorator.js';

/**
 * A route that needs a bearer token with `scope`: the guard's rule (RequireScope) and what
 * the OpenAPI document says of it (the bearer scheme, `x-required-scopes`, 401 and 403), from
 * one decorator so the two cannot disagree.
 */
export function Scoped(scope: Scope): MethodDecorator {
  return applyDecorators(
    RequireScope(scope),
    ApiBearerAuth('bearer'),
    ApiExtension('x-required-scopes', [scope]),
    ApiErrors(401, 403),
  );
}
