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

  @ApiProperty({
    enum: ['hot', 'archived'],
    description:
      'Where its rows are: `hot`, in PostgreSQL; `archived`, in the archive store only (read from there)',
  })
  tier!: string;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      "Hot: its partition's size on disk, indexes and TOAST included; archived: its files' size (bytes)",
  })
  bytes!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      "Hot: PostgreSQL's estimate of its rows (null until it was first analysed); archived: its rows",
  })
  estimatedRows!: number | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({
    // (the type named: `string | null` reflects as Object, which the document would say)
    type: String,
    format: 'date-time',
    nullable: true,
    required: false,
    description: 'When it was last archived (null: never)',
  })
  archivedAt?: string | null;
}

/** `POST /api/admin/segments/archive-due`. */
export class ArchivedDueDto {
  @ApiProperty({ type: [SegmentDto], description: 'The segments archived, oldest first' })
  archived!: SegmentDto[];
}

/** One file of an archived segment, as a verify found it. */
export class ChunkVerificationDto {
  @ApiProperty({ example: 'messages_0000000000000001/0000000000000001.tsv.gz' })
  file!: string;

  @ApiProperty()
  ok!: boolean;

  @ApiProperty({ required: false, description: 'What is wrong with it' })
  error?: string;
}

/** `POST /api/admin/segments/:firstIndex/verify`. */
export class SegmentVerificationDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  firstIndex!: number;

  @ApiProperty({ description: 'Every file matches its manifest, and the rows the whole segment' })
  ok!: boolean;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Rows read back' })
  rows!: number;

  @ApiProperty({ type: [ChunkVerificationDto] })
  chunks!: ChunkVerificationDto[];
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
