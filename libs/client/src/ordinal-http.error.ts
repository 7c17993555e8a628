import type { ErrorCode } from '@ordinal/contract';

/** The server answered with an error status; `body` is its JSON error (when it sent one). */
export class OrdinalHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    message: string,
  ) {
    super(message);
    this.name = 'OrdinalHttpError';
  }

  /** The answer's stable `code` (docs/errors.md), when it has one: what a program switches on. */
  get code(): ErrorCode | undefined {
    const code = (this.body as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? (code as ErrorCode) : undefined;
  }

  /**
   * Worth retrying: the server is unavailable or overloaded, not the request wrong. Not a 507
   * (`log_full`): the log is full for good, and a retry cannot succeed.
   */
  get retryable(): boolean {
    if (this.status === 507) return false;
    return this.status >= 500 || this.status === 429 || this.status === 408;
  }
}

/** Whether an error of a request or stream is worth retrying (network errors and 5xx are). */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof OrdinalHttpError) || error.retryable;
}
