import { OrdinalError } from '@ordinal/pg';

/** A consumer group definition or request that breaks a rule the types alone cannot state. */
export class InvalidConsumerGroupError extends OrdinalError {
  constructor(message: string) {
    super('invalid_consumer_group', message);
  }
}
