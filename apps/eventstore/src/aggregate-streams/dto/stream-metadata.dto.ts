import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import {
  MAX_AGE_LIMIT_SECONDS,
  type StoredStreamMetadata,
  type StreamMetadata,
} from '@ordinal/event-sourcing';
import { IsJsonContainer } from '../../ingest/dto/is-json-container.validator.js';

const COUNT = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;

/** `PUT /api/streams/:streamId/metadata`: retention settings and free metadata (docs/lifecycle.md). */
export class StreamMetadataDto implements StreamMetadata {
  @ApiPropertyOptional({
    ...COUNT,
    // The store's own bound, here too so the 400 names the field and the OpenAPI document states it
    maximum: MAX_AGE_LIMIT_SECONDS,
    example: 2592000,
    description: 'Seconds: older events are hidden (`expired`). At most 100 years (3155760000)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_AGE_LIMIT_SECONDS)
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

  @ApiPropertyOptional({
    example: 'acme',
    description: 'The tenant whose stream or category it is (docs/tenants.md); absent for none',
  })
  tenant?: string;

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
