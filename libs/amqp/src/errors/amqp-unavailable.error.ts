import { OrdinalError } from '@ordinal/pg';

/** The broker is not connected right now; the connection manager is reconnecting. */
export class AmqpUnavailableError extends OrdinalError {
  constructor(
    message = 'The AMQP broker is not connected; retry later',
    options?: { cause?: unknown },
  ) {
    super('amqp_unavailable', message, options);
  }
}
