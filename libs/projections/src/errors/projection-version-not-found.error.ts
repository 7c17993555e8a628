import { OrdinalError } from '@ordinal/pg';

/** No build of that projection (or of that version of it) is recorded. */
export class ProjectionVersionNotFoundError extends OrdinalError {
  constructor(
    readonly projection: string,
    readonly version?: number,
  ) {
    super(
      'projection_version_not_found',
      version === undefined
        ? `Projection '${projection}' has no recorded versions; start the service that declares it first`
        : `Projection '${projection}' has no version ${version}; see GET /api/projections/${projection} for its versions`,
    );
  }
}
