import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import type { Scope } from './api-token.js';
import { RequireScope } from './scopes.decorator.js';
import { ScopeInRouteConfig } from './route-access.js';

/**
 * A route that needs a bearer token with `scope`: the guard's rule (RequireScope), the same
 * scope in the Fastify route config (the early-authentication hook checks a request with a body
 * there, before reading the body) and what the OpenAPI document says of it (the bearer scheme,
 * `x-required-scopes`, 401 and 403), from one decorator so they cannot disagree.
 */
export function Scoped(scope: Scope): MethodDecorator {
  return applyDecorators(
    RequireScope(scope),
    ScopeInRouteConfig(scope),
    ApiBearerAuth('bearer'),
    ApiExtension('x-required-scopes', [scope]),
    ApiErrors(401, 403),
  );
}
