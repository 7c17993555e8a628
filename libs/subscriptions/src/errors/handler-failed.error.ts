import { OrdinalError } from '@ordinal/pg';

/** A handler threw while applying a message; its batch was rolled back and will be retried. */
export class HandlerFailedError extends OrdinalError {
  constructor(
    readonly subscription: string,
    readonly index: number,
    cause: unknown,
  ) {
    super(
      'handler_failed',
      `'${subscription}' failed at index ${index}: ${cause instanceof Error ? cause.message : String(cause)}; the batch was rolled back and is retried`,
      { cause },
    );
  }
}
