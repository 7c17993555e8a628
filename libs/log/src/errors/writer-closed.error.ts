import { OrdinalError } from '@ordinal/pg';

/** The writer is shutting down and accepts no more appends. */
export class WriterClosedError extends OrdinalError {
  constructor() {
    super('writer_closed', 'The log writer is shutting down; retry against another instance');
  }
}
