import { ApiProperty } from '@nestjs/swagger';
import type { SegmentInfo, SegmentsResponse } from '@ordinal/contract';

/** One segment of the log (docs/storage.md). */
export class SegmentDto implements SegmentInfo {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'Its first index' })
  firstIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Its last index' })
  lastIndex!: number;

  @ApiProperty({
    description: 'Its partition of the messages table',
    example: 'messages_0000000000000001',
  })
  table!: string;

  @ApiProperty({ enum: ['hot'], description: 'Where its rows are: `hot`, in PostgreSQL' })
  tier!: string;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: "Its partition's size on disk, indexes and TOAST included (bytes)",
  })
  bytes!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "PostgreSQL's estimate of its rows (null until it was first analysed)",
  })
  estimatedRows!: number | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

/** `GET /api/admin/segments`: every segment of the log, oldest first. */
export class SegmentsDto implements SegmentsResponse {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'Indices per segment (ORDINAL_SEGMENT_SIZE)',
  })
  segmentSize!: number;

  @ApiProperty({ type: [SegmentDto] })
  segments!: SegmentDto[];
}
