import { OrdinalError } from '@ordinal/pg';

/** A version argument out of range (versions are integers >= 1; expected versions >= 0). */
export class InvalidVersionError extends OrdinalError {
  constructor(message: string) {
    super('invalid_version', message);
  }
}
