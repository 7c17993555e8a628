import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** `GET /health`. */
export class HealthResponseDto {
  @ApiProperty({ enum: ['ok', 'degraded', 'error'] })
  status!: 'ok' | 'degraded' | 'error';

  @ApiProperty({ enum: ['up', 'down'] })
  database!: 'up' | 'down';

  @ApiProperty({
    enum: ['ok', 'full'],
    description:
      "`full`: the database's disk is full (writes answer 503 storage_full until space is freed)",
  })
  storage!: 'ok' | 'full';

  @ApiPropertyOptional({
    description:
      'With `storage: full`: what the database said (it names the file that could not grow)',
  })
  storageError?: string;

  @ApiProperty({
    enum: ['ok', 'full'],
    description:
      '`full`: an append was refused because it would pass index 2^53 − 1 (writes answer 507 log_full for good; reads go on)',
  })
  log!: 'ok' | 'full';

  @ApiPropertyOptional({ enum: ['up', 'down'], description: 'Only with AMQP on' })
  broker?: 'up' | 'down';

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "Index of this process's StartMarker",
  })
  startMarker!: number | null;
}
