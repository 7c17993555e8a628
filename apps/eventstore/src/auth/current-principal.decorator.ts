import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AuthorisedRequest } from './auth.guard.js';
import type { Principal } from './principal.js';

/** The principal the guard authorised the request for (a scoped route always has one). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal =>
    context.switchToHttp().getRequest<AuthorisedRequest>().principal!,
);
