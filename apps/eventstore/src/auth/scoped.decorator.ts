import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiHeader } from '@nestjs/swagger';
import { TENANT_PATTERN } from '@ordinal/log';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import type { Scope } from './api-token.js';
import { RequireScope, RouteTenancy } from './scopes.decorator.js';
import { ScopeInRouteConfig } from './route-access.js';
import { TENANT_HEADER, type Tenancy } from './tenancy.js';

/**
 * A route that needs a bearer token with `scope`: the guard's rule (RequireScope), the same
 * scope in the Fastify route config (the early-authentication hook checks a request with a body
 * there, before reading the body) and what the OpenAPI document says of it (the bearer scheme,
 * `x-required-scopes`, 401 and 403), from one decorator so they cannot disagree.
 *
 * `tenancy` (docs/tenants.md): `header`, the route acts for the request's tenant (the
 * principal's, or the one a trusted principal names in `Ordinal-Tenant`, documented here with
 * its 400 `invalid_tenant`); `path`, for its `:tenant` path parameter; absent, the route is not
 * per tenant and refuses (403 `tenant_forbidden`) a principal bound to a tenant or a request
 * naming one.
 */
export function Scoped(scope: Scope, tenancy?: Tenancy): MethodDecorator {
  return applyDecorators(
    RequireScope(scope),
    ...(tenancy === undefined ? [] : [RouteTenancy(tenancy)]),
    ScopeInRouteConfig(scope, tenancy),
    ApiBearerAuth('bearer'),
    ApiExtension('x-required-scopes', [scope]),
    ApiErrors(401, 403),
    ...(tenancy === undefined ? [] : [ApiErrors(400)]),
    ...(tenancy === 'header'
      ? [
          ApiHeader({
            name: TENANT_HEADER,
            required: false,
            description:
              "The tenant to act for (docs/tenants.md): only a principal with the `tenants` scope and no tenant of its own may name one, or a principal its own tenant; else 403 `tenant_forbidden`. Without it the request acts for the principal's tenant, if it has one. A malformed value (or a repeated header) is a 400 `invalid_tenant`",
            schema: { type: 'string', pattern: TENANT_PATTERN.source },
          }),
        ]
      : []),
  );
}
