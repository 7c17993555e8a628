import { ApiProperty } from '@nestjs/swagger';
import { JSON_CONTAINER_SCHEMA } from '../../openapi/json-value.js';
import { IsInt, Max, Min } from 'class-validator';
import { IsJsonContainer } from '../../ingest/dto/is-json-container.validator.js';

/** `PUT /api/streams/:streamId/snapshot`: the aggregate state at a version <= the stream's. */
export class SaveSnapshotDto {
  @ApiProperty({ type: 'integer', example: 3, minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  version!: number;

  @ApiProperty({
    ...JSON_CONTAINER_SCHEMA,
    example: { customer: 'alice', status: 'shipped' },
    description: 'A JSON object or array',
  })
  @IsJsonContainer()
  state!: Record<string, unknown> | unknown[];
}
