import { RouteConfig } from '@nestjs/platform-fastify';
import type { Scope } from './api-token.js';
import type { Tenancy } from './tenancy.js';

/** The key of a route's Fastify config under which `Scoped` records the scope it needs. */
export const ROUTE_SCOPE = 'ordinalScope';
/** … and how it treats tenants. */
export const ROUTE_TENANCY = 'ordinalTenancy';

/** A route's Fastify config as `Scoped` leaves it. */
export interface ScopedRouteConfig {
  [ROUTE_SCOPE]?: Scope;
  [ROUTE_TENANCY]?: Tenancy;
}

/**
 * Records the route's scope (and tenancy) in its Fastify route config too, where a Fastify hook
 * (which runs before Nest's guard, and before the body is read) can see it.
 */
export function ScopeInRouteConfig(scope: Scope, tenancy?: Tenancy): MethodDecorator {
  return RouteConfig({
    [ROUTE_SCOPE]: scope,
    ...(tenancy === undefined ? {} : { [ROUTE_TENANCY]: tenancy }),
  } satisfies ScopedRouteConfig);
}
