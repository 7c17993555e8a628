import { OrdinalError } from '@ordinal/pg';

/** The checkpoint moved under a batch (a rebuild or a second instance): the batch rolled back. */
export class CheckpointMovedError extends OrdinalError {
  constructor(readonly subscription: string) {
    super(
      'checkpoint_moved',
      `The checkpoint of '${subscription}' moved during a batch; the batch was rolled back and reading resumes from the stored checkpoint`,
    );
  }
}
