import { OrdinalError } from '@ordinal/pg';

/** A stream holds an event type its aggregate does not declare in `@Aggregate({ events })`. */
export class UnknownEventTypeError extends OrdinalError {
  constructor(
    readonly aggregate: string,
    readonly eventType: string,
    readonly streamId: string,
    readonly streamVersion: number,
  ) {
    super(
      'unknown_event_type',
      `${aggregate} cannot apply '${eventType}' (${streamId}@${streamVersion}); add its class to @Aggregate({ events: [...] })`,
    );
  }
}
