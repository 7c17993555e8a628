import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadOnlyReplicaError, execute, toPosition } from '@ordinal/pg';
import { InvalidTenantError } from '../errors/index.js';
import { LOCKS, SYSTEM_USER, TABLES, TENANT_DELETED_TYPE } from '../log.constants.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import { PersonalData } from '../personal/personal-data.service.js';
import { LiveRouter } from '../router/live-router.service.js';
import type { TenantDeletion as TenantDeletionAnswer } from '@ordinal/contract';
import { isTenantId } from '../tenant.js';
import { tenantLockKey } from '../writer/category-locks.js';
import { LogWriter } from '../writer/log-writer.service.js';

/** What a tenant's deletion answers: the contract's shape (docs/tenants.md#deleting-a-tenant). */
export type TenantDeletionResult = TenantDeletionAnswer;

/** The body of a `$tenant-deleted` marker. */
export interface TenantDeletedBody {
  tenant: string;
  throughIndex: number;
}

interface DeletedTenantRow {
  tenant: string;
  deleted_at: Date;
  deleted_by: string;
  reason: string;
  through_index: string;
  marker_index: string | null;
  keys_destroyed: string;
  scavenged_at: Date | null;
}

const ROW_COLUMNS = `tenant, deleted_at, deleted_by, reason, through_index::text, marker_index::text,
  keys_destroyed::text, scavenged_at`;

const toResult = (row: DeletedTenantRow, alreadyDeleted: boolean): TenantDeletionResult => ({
  tenant: row.tenant,
  deletedAt: new Date(row.deleted_at).toISOString(),
  deletedBy: row.deleted_by,
  reason: row.reason,
  throughIndex: toPosition(row.through_index),
  markerIndex: row.marker_index === null ? null : toPosition(row.marker_index),
  keysDestroyed: toPosition(row.keys_destroyed),
  scavengedAt: row.scavenged_at === null ? null : new Date(row.scavenged_at).toISOString(),
  alreadyDeleted,
});

/**
 * Deleting a tenant (docs/tenants.md#deleting-a-tenant), with the lifecycle machinery and the
 * personal-data keys: a row of `deleted_tenants` makes every position of the tenant read back
 * as a `deleted` tombstone (`hiddenReason()`), for every reader, at once (its trigger tells
 * every live router to drop its kept pages), and the writer refuse its appends
 * (`tenant_deleted`); every key of its subjects is destroyed (crypto-shredding: its sealed
 * fields are unreadable everywhere, backups of the log included, before any scavenge); a
 * `$tenant-deleted {tenant, throughIndex}` marker tells every consumer; a scavenge then erases
 * its rows' bodies, in the table and in archived segments. No index vanishes.
 *
 * The row commits under the log lock (gapless mode) and the tenant's lock (concurrent mode), so
 * no flush that read the tenant live commits after it. Deleting twice does nothing again but
 * destroy the tenant's keys again (a key a racing append made, or a restore brought back) and
 * append the marker if a crash left it out; it answers the first deletion.
 */
@Injectable()
export class TenantDeletion {
  private readonly logger = new Logger(TenantDeletion.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly writer: LogWriter,
    private readonly personal: PersonalData,
    private readonly router: LiveRouter,
  ) {}

  /** Deletes `tenant` (by `by`, for `reason`); see the class. */
  async delete(
    tenant: string,
    options: { by?: string; reason?: string } = {},
  ): Promise<TenantDeletionResult> {
    if (!isTenantId(tenant)) throw new InvalidTenantError(tenant);
    if (this.options.role === 'replica-reader') throw new ReadOnlyReplicaError();
    const by = options.by ?? SYSTEM_USER;
    const reason = options.reason ?? '';
    const created = await this.dataSource.transaction(async (manager) => {
      if (this.options.ordering === 'gapless')
        await manager.query(`SELECT pg_advisory_xact_lock($1::bigint)`, [LOCKS.log]);
      await manager.query(`SELECT pg_advisory_xact_lock($1::bigint)`, [
        String(tenantLockKey(tenant)),
      ]);
      return execute<DeletedTenantRow>(manager, {
        text: `INSERT INTO ${TABLES.deletedTenants} (tenant, deleted_by, reason, through_index)
               VALUES ($1, $2, $3, (SELECT coalesce(max(index), 0) FROM ${TABLES.messages}))
               ON CONFLICT (tenant) DO NOTHING
               RETURNING ${ROW_COLUMNS}`,
        values: [tenant, by, reason],
      });
    });
    const first = created.length > 0;
    // Pages kept here for catch-up hold the tenant's bodies (the trigger's notice tells every
    // router, this one too, a moment later).
    if (first) this.router.forgetKeptReads();
    // The keys: once they are gone no reader anywhere gets a clear value of the tenant's.
    const destroyed = await this.personal.destroyTenant(tenant);
    let row = first ? created[0] : await this.read(tenant);
    if (first && destroyed > 0) row = await this.update(tenant, `keys_destroyed = $2`, [destroyed]);
    if (row.marker_index === null) {
      const { entries } = await this.writer.append({
        messages: [
          {
            messageType: TENANT_DELETED_TYPE,
            userId: SYSTEM_USER,
            body: {
              tenant,
              throughIndex: toPosition(row.through_index),
            } satisfies TenantDeletedBody,
          },
        ],
        skipDuplicateWindow: true,
      });
      const entry = entries[0];
      if (entry.status !== 'duplicate')
        row = await this.update(tenant, `marker_index = coalesce(marker_index, $2)`, [
          entry.message.id,
        ]);
    }
    if (first)
      this.logger.log(
        `Tenant ${tenant} deleted by ${by} through index ${row.through_index}: ${destroyed} keys destroyed, marker at ${row.marker_index}`,
      );
    return toResult(row, !first);
  }

  /** The deletion of `tenant`, or null when it is not deleted. */
  async deletion(tenant: string): Promise<TenantDeletionResult | null> {
    if (!isTenantId(tenant)) throw new InvalidTenantError(tenant);
    const [row] = await execute<DeletedTenantRow>(this.dataSource.manager, {
      text: `SELECT ${ROW_COLUMNS} FROM ${TABLES.deletedTenants} WHERE tenant = $1`,
      values: [tenant],
    });
    return row ? toResult(row, true) : null;
  }

  private async read(tenant: string): Promise<DeletedTenantRow> {
    const [row] = await execute<DeletedTenantRow>(this.dataSource.manager, {
      text: `SELECT ${ROW_COLUMNS} FROM ${TABLES.deletedTenants} WHERE tenant = $1`,
      values: [tenant],
    });
    return row;
  }

  /** Sets `assignment` (constant SQL of this class, `$2`… its values) on the tenant's row. */
  private async update(
    tenant: string,
    assignment: string,
    values: unknown[],
  ): Promise<DeletedTenantRow> {
    const [row] = await execute<DeletedTenantRow>(this.dataSource.manager, {
      text: `UPDATE ${TABLES.deletedTenants} SET ${assignment} WHERE tenant = $1 RETURNING ${ROW_COLUMNS}`,
      values: [tenant, ...values],
    });
    return row;
  }
}
