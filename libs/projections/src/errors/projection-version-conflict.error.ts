import { OrdinalError } from '@ordinal/pg';

/** A promotion, rollback or retirement that the versions' states do not allow (e.g. lost a race). */
export class ProjectionVersionConflictError extends OrdinalError {
  constructor(
    readonly projection: string,
    message: string,
  ) {
    super('projection_version_conflict', `Projection '${projection}': ${message}`);
  }
}
