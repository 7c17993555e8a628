import { OrdinalError } from '@ordinal/pg';

/** A message the log cannot store as given (the database rejected its content). */
export class InvalidMessageError extends OrdinalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_message', message, options);
  }
}
