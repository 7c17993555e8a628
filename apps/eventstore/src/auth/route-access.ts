import { RouteConfig } from '@nestjs/platform-fastify';
import type { Scope } from './api-token.js';

/** The key of a route's Fastify config under which `Scoped` records the scope it needs. */
export const ROUTE_SCOPE = 'ordinalScope';

/** A route's Fastify config as `Scoped` leaves it. */
export interface ScopedRouteConfig {
  [ROUTE_SCOPE]?: Scope;
}

/**
 * Records the route's scope in its Fastify route config too, where a Fastify hook (which runs
 * before Nest's guard, and before the body is read) can see it.
 */
export function ScopeInRouteConfig(scope: Scope): MethodDecorator {
  return RouteConfig({ [ROUTE_SCOPE]: scope } satisfies ScopedRouteConfig);
}
