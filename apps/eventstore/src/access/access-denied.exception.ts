import { ForbiddenException } from '@nestjs/common';
import type { HttpErrorCode } from '@ordinal/contract';

/** 403 `access_denied`: an access rule does not let the principal do this (docs/security.md). */
export class AccessDeniedException extends ForbiddenException {
  constructor(
    message: string,
    denied?: { index?: number; messageType?: string; streamId?: string | null },
  ) {
    super({
      message,
      code: 'access_denied' satisfies HttpErrorCode,
      ...(denied ? { denied } : {}),
    });
  }
}
