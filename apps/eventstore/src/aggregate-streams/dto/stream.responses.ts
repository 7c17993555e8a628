import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { JSON_CONTAINER_SCHEMA } from '../../openapi/json-value.js';

/** The answer to an append: the stream's new version and the indices the events got. */
export class AppendResultDto {
  @ApiProperty()
  streamId!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({ type: 'integer', minimum: 1 })
  firstIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 1 })
  lastIndex!: number;
}

/** One event of a stream as read. */
export class StreamEventResponseDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Its global index' })
  index!: number;

  @ApiProperty()
  eventType!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  schemaVersion!: number;

  @ApiProperty({ ...JSON_CONTAINER_SCHEMA })
  data!: unknown;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  metadata!: Record<string, unknown> | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['/email'],
    description:
      'JSON pointers of personal fields shown as their replacement: the reader lacks the personal scope, or the subject was erased (docs/personal-data.md)',
  })
  redacted?: string[];
}

/** The snapshot a read starts from. */
export class StreamSnapshotDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({ ...JSON_CONTAINER_SCHEMA })
  state!: unknown;
}

/** Versions a read did not get: its stream's lifecycle hides them (docs/lifecycle.md). */
export class HiddenVersionsDto {
  @ApiProperty({ type: 'integer', minimum: 2, description: 'Every version below this one' })
  beforeVersion!: number;

  @ApiProperty({ enum: ['deleted', 'truncated', 'expired', 'scavenged'] })
  reason!: 'deleted' | 'truncated' | 'expired' | 'scavenged';
}

/** `GET /api/streams/:streamId`: the newest usable snapshot and the events after it. */
export class StreamReadResponseDto {
  @ApiProperty()
  streamId!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  version!: number;

  @ApiPropertyOptional({ type: StreamSnapshotDto })
  snapshot?: StreamSnapshotDto;

  @ApiProperty({ type: [StreamEventResponseDto] })
  events!: StreamEventResponseDto[];

  @ApiProperty({ type: 'integer', minimum: 0 })
  count!: number;

  @ApiPropertyOptional({
    type: HiddenVersionsDto,
    description:
      'Present when a delete or a retention rule hides versions of the stream: the read starts after them',
  })
  hidden?: HiddenVersionsDto;
}

/** A stream's current version (0 when it has no events). */
export class StreamVersionDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  version!: number;
}

/** A saved snapshot. */
export class SnapshotSavedDto {
  @ApiProperty()
  streamId!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

/** A stored snapshot. */
export class SnapshotDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({ ...JSON_CONTAINER_SCHEMA })
  state!: unknown;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

/** `GET /api/streams/:streamId/snapshot`. */
export class SnapshotReadDto {
  @ApiProperty()
  streamId!: string;

  @ApiProperty({ type: SnapshotDto, nullable: true })
  snapshot!: SnapshotDto | null;
}

/** One stream of `GET /api/streams`. */
export class StreamSummaryDto {
  @ApiProperty()
  streamId!: string;

  @ApiPropertyOptional({
    example: 'acme',
    description:
      "For a principal of no tenant, the stream's tenant (docs/tenants.md); absent for a stream of no tenant",
  })
  tenant?: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({ format: 'date-time', description: 'When its last event was appended' })
  updatedAt!: string;
}

/** `GET /api/streams`: a page of streams in id order. */
export class StreamListResponseDto {
  @ApiProperty({ type: [StreamSummaryDto] })
  streams!: StreamSummaryDto[];

  @ApiPropertyOptional({
    description:
      "Present when the page is full: pass it as `after` for the next page (for a principal of no tenant, a tenant's stream is named `<tenant>/<id>`)",
  })
  next?: string;
}
