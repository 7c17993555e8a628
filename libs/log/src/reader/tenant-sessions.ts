import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execute, type SqlQuery } from '@ordinal/pg';
import { TENANT_ROLE, TENANT_SETTING } from '../tenant.js';

/**
 * Runs a tenant's reads behind PostgreSQL's row-level security (docs/tenants.md): in a
 * transaction that switches to the role `ordinal_tenant` and names the tenant, so the log's
 * policy drops every other tenant's row even if the query forgot its filter. Reads of no
 * tenant run as they are. When this database user may not take the role (a migration without
 * the privilege to create it), tenants' reads rely on their queries' filter alone, with a
 * warning at the first one.
 */
@Injectable()
export class TenantSessions {
  private readonly logger = new Logger('Tenants');
  private wall: Promise<boolean> | null = null;

  constructor(private readonly dataSource: DataSource) {}

  /** `query`'s rows, read as `tenant` (under its row-level security) when one is given. */
  async read<R>(tenant: string | undefined, query: SqlQuery): Promise<R[]> {
    if (tenant === undefined || !(await this.hasWall()))
      return execute<R>(this.dataSource.manager, query);
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT set_config('role', $1, true), set_config($2, $3, true)`, [
        TENANT_ROLE,
        TENANT_SETTING,
        tenant,
      ]);
      return execute<R>(manager, query);
    });
  }

  /** Whether this database user can switch to `ordinal_tenant` (asked once). */
  hasWall(): Promise<boolean> {
    return (this.wall ??= execute<{ ok: boolean }>(this.dataSource.manager, {
      text: `SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)
                THEN pg_has_role(current_user, $1, 'MEMBER') ELSE false END AS ok`,
      values: [TENANT_ROLE],
    }).then(
      ([row]) => {
        if (!row.ok)
          this.logger.warn(
            `The database user cannot take the role ${TENANT_ROLE}: tenants' reads are filtered by their queries only, without row-level security (docs/tenants.md)`,
          );
        return row.ok;
      },
      (error: unknown) => {
        this.wall = null;
        throw error;
      },
    ));
  }
}
