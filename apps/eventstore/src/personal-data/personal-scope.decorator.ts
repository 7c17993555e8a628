import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AuthorisedRequest } from '../auth/auth.guard.js';

/**
 * Whether the request's token holds the `personal` scope: its reader gets personal fields in
 * clear (docs/personal-data.md); every other reader gets their replacements and `redacted`.
 */
export const PersonalScope = createParamDecorator(
  (_: unknown, context: ExecutionContext): boolean =>
    context.switchToHttp().getRequest<AuthorisedRequest>().principal?.scopes.has('personal') ??
    false,
);
