/**
 * Base class of every error Ordinal's libraries throw. `code` is stable and machine-readable;
 * servers map codes to status codes in one place, domain code can switch on it.
 */
export class OrdinalError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
