import { OrdinalError } from '@ordinal/pg';

/** The stream was soft-deleted. Append with `no_stream` or `any` to re-create it. */
export class StreamDeletedError extends OrdinalError {
  constructor(
    readonly streamId: string,
    readonly lastVersion: number,
  ) {
    super(
      'stream_deleted',
      `Stream ${streamId} was deleted at version ${lastVersion}; append with expectedVersion 'no_stream' or 'any' to re-create it at version ${lastVersion + 1}`,
    );
  }
}

/** The stream was deleted for good (`mode: 'tombstone'`): nothing can read or write it again. */
export class StreamTombstonedError extends OrdinalError {
  constructor(readonly streamId: string) {
    super(
      'stream_tombstoned',
      `Stream ${streamId} was tombstoned: it can never be read, appended to or re-created; use another stream id`,
    );
  }
}

/** A soft delete of a stream that has no events. */
export class StreamNotFoundError extends OrdinalError {
  constructor(readonly streamId: string) {
    super(
      'stream_not_found',
      `Stream ${streamId} has no events, so there is nothing to delete; check the id (a tombstone reserves an id that never existed)`,
    );
  }
}

/** A scavenge is already running (this process or another holds its lock). */
export class ScavengeRunningError extends OrdinalError {
  constructor() {
    super(
      'scavenge_running',
      'A scavenge is already running; follow its progress (GET /api/admin/scavenge, ordinal status) instead of starting another',
    );
  }
}

/** The tenant was deleted (docs/tenants.md#deleting-a-tenant): nothing can be appended for it again. */
export class TenantDeletedError extends OrdinalError {
  constructor(readonly tenant: string) {
    super(
      'tenant_deleted',
      `Tenant ${tenant} was deleted: its messages read as tombstones and nothing can be appended for it again; use another tenant id`,
    );
  }
}

/** A tenant id outside `TENANT_PATTERN` (docs/tenants.md). */
export class InvalidTenantError extends OrdinalError {
  constructor(readonly tenant: unknown) {
    super(
      'invalid_tenant',
      `A tenant id is 1-63 letters, digits, '_' or '.', starting with a letter or a digit, not ${JSON.stringify(tenant)}`,
    );
  }
}
