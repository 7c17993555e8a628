import { OrdinalError } from '@ordinal/pg';

/**
 * A projection with `tenantIsolation` cannot start: the database user may not take the role
 * `ordinal_tenant` (docs/tenants.md), so its handlers would run without the row-level security
 * wall. Grant the role (`GRANT ordinal_tenant TO <user>`), or run the migrations as a user that
 * may create it. Its code is `invalid_configuration`: an operator fixes the grant and restarts.
 */
export class TenantWallUnavailableError extends OrdinalError {
  constructor(readonly projection: string) {
    super(
      'invalid_configuration',
      `Projection '${projection}' has tenantIsolation, but the database user cannot take the role ordinal_tenant: it does not start without the row-level security wall. Grant the role (GRANT ordinal_tenant TO <user>), or let a user with CREATEROLE run the migrations (docs/tenants.md)`,
    );
  }
}
