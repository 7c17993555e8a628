import { ORDINAL_ERROR_CODES, type OrdinalErrorCode } from '@ordinal/contract';

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

const CODES: ReadonlySet<string> = new Set(ORDINAL_ERROR_CODES);

/** Whether `code` is one this version knows (a code read back from another process or version). */
export function isOrdinalErrorCode(code: unknown): code is OrdinalErrorCode {
  return typeof code === 'string' && CODES.has(code);
}
