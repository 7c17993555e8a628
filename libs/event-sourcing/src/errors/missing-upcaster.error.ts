import { OrdinalError } from '@ordinal/pg';

/** An event is stored at an older schema than its class and no upcaster chain reaches the class's. */
export class MissingUpcasterError extends OrdinalError {
  constructor(
    readonly eventType: string,
    readonly reached: number,
    readonly wanted: number,
  ) {
    super(
      'missing_upcaster',
      `No upcaster for '${eventType}' from schema version ${reached} (the class wants ${wanted}); register @Upcaster('${eventType}', ${reached})`,
    );
  }
}
