import { OrdinalError } from '@ordinal/pg';

/** A class is used as an aggregate or event without the decorator that describes it. */
export class InvalidAggregateError extends OrdinalError {
  constructor(message: string) {
    super('invalid_aggregate', message);
  }
}
