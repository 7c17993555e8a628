import { OrdinalError } from '@ordinal/pg';

/** An `@Upcaster` provider without an `upcast(data, metadata)` method, or a bad version. */
export class InvalidUpcasterError extends OrdinalError {
  constructor(message: string) {
    super('invalid_upcaster', message);
  }
}
