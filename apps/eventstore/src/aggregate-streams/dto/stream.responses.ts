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
}

/** The snapshot a read starts from. */
export class StreamSnapshotDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version!: number;

  @ApiProperty({ ...JSON_CONTAINER_SCHEMA })
  state!: unknown;
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
