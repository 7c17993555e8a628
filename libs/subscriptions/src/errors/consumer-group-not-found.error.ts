import { OrdinalError } from '@ordinal/pg';

/** No consumer group of that name is defined on this database. */
export class ConsumerGroupNotFoundError extends OrdinalError {
  constructor(readonly group: string) {
    super(
      'consumer_group_not_found',
      `No consumer group named '${group}'; define it with PUT /api/consumer-groups/${group} (GET /api/consumer-groups lists them)`,
    );
  }
}
