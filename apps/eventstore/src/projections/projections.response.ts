import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** One projection or subscription (the fields it always has; more may follow). */
export class SubscriptionReportDto {
  @ApiProperty()
  name!: string;

  @ApiProperty()
  kind!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  position!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  head!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  lag!: number;

  @ApiProperty()
  state!: string;

  @ApiPropertyOptional({ description: 'With atLeast: whether it was reached in time' })
  reached?: boolean;
}

/** The low watermark's figures. */
export class WatermarkStatusDto {
  @ApiProperty({ enum: ['gapless', 'concurrent'] })
  ordering!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  position!: number;

  @ApiProperty({ type: 'integer' })
  gapTimeoutMs!: number;

  @ApiProperty()
  exactRelease!: boolean;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  heldHole!: Record<string, unknown> | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } })
  counters!: Record<string, number>;
}

/** `GET /api/projections`. */
export class ProjectionsResponseDto {
  @ApiPropertyOptional({ description: 'With atLeast: whether every one reached it in time' })
  reached?: boolean;

  @ApiProperty({ type: [SubscriptionReportDto] })
  projections!: SubscriptionReportDto[];

  @ApiProperty({ type: WatermarkStatusDto })
  watermark!: WatermarkStatusDto;
}
