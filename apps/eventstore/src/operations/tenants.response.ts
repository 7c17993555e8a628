import { ApiProperty } from '@nestjs/swagger';
import type { TenantDeletionResult } from '@ordinal/log';

/** What a tenant's deletion answers (docs/tenants.md#deleting-a-tenant). */
export class TenantDeletionDto implements TenantDeletionResult {
  @ApiProperty({ example: 'acme' })
  tenant!: string;

  @ApiProperty({ format: 'date-time', description: 'When the first deletion committed' })
  deletedAt!: string;

  @ApiProperty({ example: 'token:ops', description: 'Who deleted the tenant' })
  deletedBy!: string;

  @ApiProperty({ description: 'The reason given (`?reason=`), may be empty' })
  reason!: string;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'The log’s head when the deletion committed: every position of the tenant is at or below it and reads back as a `deleted` tombstone',
  })
  throughIndex!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Index of the `$tenant-deleted` marker',
  })
  markerIndex!: number | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Personal-data keys of the tenant’s subjects the deletion destroyed',
  })
  keysDestroyed!: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'When a scavenge had erased every row of the tenant (null until one has)',
  })
  scavengedAt!: string | null;

  @ApiProperty({
    description: 'True when the tenant had been deleted before: nothing was done again',
  })
  alreadyDeleted!: boolean;
}
