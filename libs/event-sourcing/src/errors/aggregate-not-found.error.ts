import { OrdinalError } from '@ordinal/pg';

/** `load` found no event in the stream. Use `find` for "maybe", `create` for a new aggregate. */
export class AggregateNotFoundError extends OrdinalError {
  constructor(readonly streamId: string) {
    super(
      'aggregate_not_found',
      `Stream ${streamId} has no events; create the aggregate with repository.create(id)`,
    );
  }
}
