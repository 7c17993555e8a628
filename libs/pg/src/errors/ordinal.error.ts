import type { OrdinalErrorCode } from '@ordinal/contract';

/**
 * Base class of every error Ordinal's libraries throw. `code` is stable and machine-readable,
 * one of `ORDINAL_ERROR_CODES` (`@ordinal/contract`): a new code is added there, with its HTTP
 * status in the server's filter and a line in `docs/errors.md`. Domain code can switch on it.
 */
export class OrdinalError extends Error {
  constructor(
    readonly code: OrdinalErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
