import { OrdinalError } from '@ordinal/pg';

/** A projection or one of its handlers is malformed; the message names it and the fix. */
export class InvalidProjectionError extends OrdinalError {
  constructor(message: string) {
    super('invalid_projection', message);
  }
}
