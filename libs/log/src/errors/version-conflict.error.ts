import { OrdinalError } from '@ordinal/pg';

/**
 * An append's expected version did not match the stream. Load the stream again, decide
 * again, and retry (see `retryOnConflict`).
 */
export class VersionConflictError extends OrdinalError {
  constructor(
    readonly streamId: string,
    readonly current: number,
    readonly expected: number | string,
  ) {
    super(
      'version_conflict',
      `Stream ${streamId} is at version ${current}, expected ${expected}; reload and retry`,
    );
  }
}
