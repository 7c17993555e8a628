import { OrdinalError } from '@ordinal/pg';

/** A definition that would change what an existing group reads or how it orders (source, from, strategy, keyPath). */
export class ConsumerGroupConflictError extends OrdinalError {
  constructor(
    readonly group: string,
    readonly field: string,
  ) {
    super(
      'consumer_group_conflict',
      `Consumer group '${group}' exists with another '${field}'; only ackTimeoutMs, maxDeliveries, maxInFlight and parkAfter can change: DELETE the group and define it again to change '${field}'`,
    );
  }
}
