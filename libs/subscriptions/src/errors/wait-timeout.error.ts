import { OrdinalError } from '@ordinal/pg';

/** `waitFor` gave up: the subscription had not reached the index in time. */
export class WaitTimeoutError extends OrdinalError {
  constructor(
    readonly subscription: string,
    readonly index: number,
    readonly timeoutMs: number,
  ) {
    super(
      'wait_timeout',
      `'${subscription}' did not reach index ${index} within ${timeoutMs} ms; retry, or check its status for an error`,
    );
  }
}
