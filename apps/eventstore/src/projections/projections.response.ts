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

/** A message a projection's `park` error policy set aside. */
export class ParkedMessageDto {
  @ApiProperty({ description: 'The consumer (projection, or one partition of it, `<name>#<n>`)' })
  consumer!: string;

  @ApiProperty({ type: 'integer', description: "The message's index" })
  position!: number;

  @ApiProperty()
  messageType!: string;

  @ApiProperty({ description: "The handler's last error" })
  error!: string;

  @ApiProperty({ type: 'integer' })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  parkedAt!: string;
}

/** `GET /api/projections/:name/parked`. */
export class ParkedListDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ type: [ParkedMessageDto] })
  parked!: ParkedMessageDto[];
}

/** `POST /api/projections/:name/parked/replay`. */
export class ParkedReplayDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ type: 'integer', description: 'Applied again, and gone from the parked list' })
  replayed!: number;

  @ApiProperty({ type: 'integer', description: 'Still parked (the first of them failed again)' })
  remaining!: number;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The error of the first message that failed again',
  })
  error!: string | null;
}
