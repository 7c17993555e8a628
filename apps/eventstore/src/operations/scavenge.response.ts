import { ApiProperty } from '@nestjs/swagger';
import type { ScavengeRun } from '@ordinal/log';

/** One scavenge run (docs/lifecycle.md). */
export class ScavengeRunDto implements ScavengeRun {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ enum: ['running', 'finished', 'failed'] })
  status!: 'running' | 'finished' | 'failed';

  @ApiProperty({ format: 'date-time' })
  startedAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finishedAt!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Erases hidden rows up to this index' })
  through!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Every index up to this one is done' })
  position!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  rowsErased!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Stored bytes of the erased bodies and metadata',
  })
  bytesFreed!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  batches!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Size of the messages table before the run',
  })
  tableBytesBefore!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Size of the messages table after the run and its VACUUM',
  })
  tableBytesAfter!: number | null;

  @ApiProperty({ type: String, nullable: true })
  error!: string | null;
}

/** `GET /api/admin/scavenge`: the run in progress here and the newest runs. */
export class ScavengeStatusDto {
  @ApiProperty({
    type: ScavengeRunDto,
    nullable: true,
    description: 'The run this server is doing, or null',
  })
  running!: ScavengeRunDto | null;

  @ApiProperty({
    type: [ScavengeRunDto],
    description: 'The newest runs of any server, newest first',
  })
  runs!: ScavengeRunDto[];
}
