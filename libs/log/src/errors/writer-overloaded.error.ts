import { OrdinalError } from '@ordinal/pg';

/** The writer's queue is full (the database is slower than the producers); retry later. */
export class WriterOverloadedError extends OrdinalError {
  constructor(queued: number) {
    super('writer_overloaded', `The write queue holds ${queued} messages; retry later`);
  }
}
