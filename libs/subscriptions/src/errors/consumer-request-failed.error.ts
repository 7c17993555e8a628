import { OrdinalError } from '@ordinal/pg';

/** The process that owns a consumer ran an operation asked of it (rebuild, replay, resume) and it failed. */
export class ConsumerRequestFailedError extends OrdinalError {
  constructor(
    readonly consumer: string,
    readonly command: string,
    reason: string,
  ) {
    super(
      'consumer_request_failed',
      `The process running '${consumer}' could not ${command}: ${reason}`,
    );
  }
}
