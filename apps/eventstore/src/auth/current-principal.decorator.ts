import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AuthorisedRequest } from './auth.guard.js';
import type { Principal } from './principal.js';

/** The principal the guard authorised the request for (a scoped route always has one). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal =>
    context.switchToHttp().getRequest<AuthorisedRequest>().principal!,
);

/**
 * The tenant the request acts for (docs/tenants.md), as the guard decided it on a route per
 * tenant (`Scoped(scope, 'header' | 'path')`); undefined: none.
 */
export const CurrentTenant = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined =>
    context.switchToHttp().getRequest<AuthorisedRequest>().tenant,
);
