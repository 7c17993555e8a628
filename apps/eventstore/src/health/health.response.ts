import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** `GET /health`. */
export class HealthResponseDto {
  @ApiProperty({ enum: ['ok', 'degraded', 'error'] })
  status!: 'ok' | 'degraded' | 'error';

  @ApiProperty({ enum: ['up', 'down'] })
  database!: 'up' | 'down';

  @ApiPropertyOptional({ enum: ['up', 'down'], description: 'Only with AMQP on' })
  broker?: 'up' | 'down';

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "Index of this process's StartMarker",
  })
  startMarker!: number | null;
}
