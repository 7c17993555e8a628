import { OrdinalError } from '@ordinal/pg';

/**
 * A snapshot is ahead of its stream: saved at a version the stream has not reached, or found
 * at load above the stream's head (the stream was restored without its snapshots). Snapshot at
 * a version ≤ the current one (`GET /api/streams/:id/version`).
 */
export class SnapshotVersionExceedsStreamError extends OrdinalError {
  constructor(
    readonly streamId: string,
    readonly version: number,
    readonly current: number,
  ) {
    super(
      'snapshot_version_exceeds_stream',
      `Snapshot of ${streamId} at version ${version} is ahead of the stream (version ${current}); snapshot at a version <= ${current}`,
    );
  }
}
