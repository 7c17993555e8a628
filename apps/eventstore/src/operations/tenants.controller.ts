import { Controller, Delete, HttpCode, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { TenantDeletion } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import { principalLabel, type Principal } from '../auth/principal.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';
import { TenantDeletionDto } from './tenants.response.js';
import { parameterError } from '../errors/parameter-errors.js';
import { singleParam } from '../events/query-params.js';

/** Deleting a tenant (docs/tenants.md#deleting-a-tenant). */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/admin/tenants')
export class TenantsAdminController {
  constructor(private readonly deletion: TenantDeletion) {}

  @Delete(':tenant')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Delete a tenant',
    description:
      'Every position of the tenant reads back as a `deleted` tombstone from now on, for every reader (no index vanishes); its appends are refused (410 `tenant_deleted`); every personal-data key of its subjects is destroyed at once (crypto-shredding); a `$tenant-deleted {tenant, throughIndex}` marker is appended; the next scavenge erases its rows’ bodies, in the table and in archived segments. Idempotent: deleting again answers the first deletion (`alreadyDeleted`). 400 `invalid_tenant` for a bad tenant id. Needs the `admin` scope.',
  })
  @ApiParam({
    name: 'tenant',
    schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.]{0,62}$' },
  })
  @ApiQuery({
    name: 'reason',
    required: false,
    description: 'Kept with the deletion (at most 2000 characters)',
    schema: { type: 'string', maxLength: 2000 },
  })
  @ApiOkResponse({ type: TenantDeletionDto })
  @ApiErrors(400, 421, 500, 503)
  async delete(
    @Param('tenant') tenant: string,
    @CurrentPrincipal() principal: Principal,
    @Query('reason') reasonRaw?: string,
  ): Promise<TenantDeletionDto> {
    const reason = singleParam('reason', reasonRaw);
    if (reason !== undefined && reason.length > 2000)
      throw parameterError('reason', 'reason must be at most 2000 characters');
    return this.deletion.delete(tenant, { by: principalLabel(principal), reason });
  }
}
