import { OrdinalError } from '@ordinal/pg';

/**
 * A line of a bulk import the log refuses: not a valid message (`invalid_message`), or an
 * idempotency key already used for a different message (`idempotency_key_reused`). The import
 * it belongs to commits nothing; `line` is its 1-based line number in the input.
 */
export class ImportLineError extends OrdinalError {
  constructor(
    readonly line: number,
    code: 'invalid_message' | 'idempotency_key_reused',
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(code, `Line ${line}: ${reason}; nothing of this import was stored`, options);
  }
}
