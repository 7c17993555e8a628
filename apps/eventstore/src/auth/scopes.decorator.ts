import { Reflector } from '@nestjs/core';
import type { Scope } from './api-token.js';
import type { Tenancy } from './tenancy.js';

/** The scope a route needs (`read`, `write` or `admin`). Routes without it need none beyond a valid token. */
export const RequireScope = Reflector.createDecorator<Scope>();

/** Marks a route that also accepts a stream ticket (`?ticket=`) instead of a bearer token. */
export const AcceptsTicket = Reflector.createDecorator<boolean>({ transform: () => true });

/** Marks a route that needs no token (health, metrics, the debug console's page). */
export const Public = Reflector.createDecorator<boolean>({ transform: () => true });

/** How a route treats tenants (`Tenancy`); absent: not per tenant (operators only). */
export const RouteTenancy = Reflector.createDecorator<Tenancy>();
