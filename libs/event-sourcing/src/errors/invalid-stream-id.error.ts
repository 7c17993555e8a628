import { OrdinalError } from '@ordinal/pg';

/** A stream id outside the allowed shape (see `STREAM_ID_PATTERN`). */
export class InvalidStreamIdError extends OrdinalError {
  constructor(readonly streamId: string) {
    super(
      'invalid_stream_id',
      `Stream id '${streamId.slice(0, 80)}' is invalid: use 1-200 characters of [A-Za-z0-9._:@-], starting with a letter or digit (category = text before the first '-')`,
    );
  }
}
