import { OrdinalError } from '@ordinal/pg';

/** An operation needs the process that runs a consumer, and no live process owns it. */
export class ConsumerNotRunningError extends OrdinalError {
  constructor(readonly consumer: string) {
    super(
      'consumer_not_running',
      `No running process owns '${consumer}' (its owners stopped or died); start the service that declares it, then try again`,
    );
  }
}
