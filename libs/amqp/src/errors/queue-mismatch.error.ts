import { OrdinalError } from '@ordinal/pg';

/**
 * A queue exists on the broker with other arguments than the server declares (AMQP 406
 * PRECONDITION_FAILED), e.g. an input queue created before without the dead-letter policy.
 */
export class QueueMismatchError extends OrdinalError {
  constructor(
    readonly queue: string,
    readonly expectedArguments: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(
      'queue_mismatch',
      `Queue '${queue}' exists with other arguments than ${JSON.stringify(expectedArguments)}; ` +
        `delete it (rabbitmqctl delete_queue ${queue}) or drain it into a queue of another name, then the server declares it again`,
      options,
    );
  }
}
