/**
 * An `AggregateSpec` expectation that did not hold. An `Error` with `code:
 * 'ERR_ASSERTION'` like Node's `AssertionError`, so Jest, `node:test` and other runners
 * report it as a failed assertion; the message lists what was expected and what happened.
 */
export class AggregateSpecFailure extends Error {
  readonly code = 'ERR_ASSERTION';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AggregateSpecFailure';
  }
}
