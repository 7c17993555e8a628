import { ApiProperty } from '@nestjs/swagger';

/** One consumer's figures in a sample. */
export class ConsumerSampleDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: ['projection', 'subscription'] })
  kind!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  position!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Messages between the safe head and its position',
  })
  lag!: number;
}

/** The hole the low watermark held at a sample. */
export class HoleSampleDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  from!: number;

  @ApiProperty({ type: 'integer', minimum: 1 })
  to!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'How long it had been held' })
  heldMs!: number;
}

/** The figures of one moment. */
export class DashboardSampleDto {
  @ApiProperty({
    type: 'integer',
    description: "When it was taken (ms since the epoch, the server's clock)",
  })
  at!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'The highest committed index' })
  head!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'The highest index readers may see (the low watermark in concurrent mode)',
  })
  safeHead!: number;

  @ApiProperty({
    type: 'number',
    minimum: 0,
    nullable: true,
    description: 'Messages stored per second since the sample before (null for the first)',
  })
  rate!: number | null;

  @ApiProperty({
    type: HoleSampleDto,
    nullable: true,
    description: 'The hole the low watermark held (null: none)',
  })
  hole!: HoleSampleDto | null;

  @ApiProperty({ type: [ConsumerSampleDto] })
  consumers!: ConsumerSampleDto[];
}

/** `GET /api/dashboard`. */
export class DashboardResponseDto {
  @ApiProperty({ type: 'integer', description: 'Time between samples (ms)' })
  sampleMs!: number;

  @ApiProperty({ type: 'integer', description: 'History kept in this server process (ms)' })
  windowMs!: number;

  @ApiProperty({ enum: ['gapless', 'concurrent'] })
  ordering!: string;

  @ApiProperty({ type: [DashboardSampleDto], description: 'Oldest first' })
  samples!: DashboardSampleDto[];
}
