import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { StoredStreamMetadata, StreamMetadata } from '@ordinal/event-sourcing';
import { IsJsonContainer } from '../../ingest/dto/is-json-container.validator.js';

const COUNT = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;

/**
 * The largest `maxAge` a PUT accepts: 100 years in seconds, the store's own bound
 * (`MAX_AGE_LIMIT_SECONDS` of `@ordinal/event-sourcing`; a spec keeps them equal), here so the
 * 400 names the field like every other bad field and the OpenAPI document states it.
 */
export const MAX_AGE_SECONDS = 3_155_760_000;

/** `PUT /api/streams/:streamId/metadata`: retention settings and free metadata (docs/lifecycle.md). */
export class StreamMetadataDto implements StreamMetadata {
  @ApiPropertyOptional({
    ...COUNT,
    maximum: MAX_AGE_SECONDS,
    example: 2592000,
    description: 'Seconds: older events are hidden (`expired`). At most 100 years (3155760000)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_AGE_SECONDS)
  maxAge?: number;

  @ApiPropertyOptional({ ...COUNT, description: 'Only the newest this many events are visible' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  maxCount?: number;

  @ApiPropertyOptional({ ...COUNT, description: 'Versions below this one are hidden' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  truncateBefore?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Anything the application keeps with the stream',
  })
  @IsOptional()
  @IsJsonContainer()
  custom?: Record<string, unknown>;
}

/** A stream's (or a category's) metadata with its own version. */
export class StreamMetadataResponseDto implements StoredStreamMetadata {
  @ApiProperty({ example: 'order-1001', description: 'The stream id, or a category pattern' })
  streamId!: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: '0 when never written' })
  metadataVersion!: number;

  @ApiPropertyOptional({ ...COUNT })
  maxAge?: number;

  @ApiPropertyOptional({ ...COUNT })
  maxCount?: number;

  @ApiPropertyOptional({ ...COUNT })
  truncateBefore?: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  custom?: Record<string, unknown>;
}
