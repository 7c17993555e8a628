import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { IsJsonContainer } from '../../ingest/dto/is-json-container.validator.js';

/** `PUT /api/streams/:streamId/snapshot`: the aggregate state at a version <= the stream's. */
export class SaveSnapshotDto {
  @ApiProperty({ example: 3, minimum: 1 })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  version!: number;

  @ApiProperty({ example: { customer: 'alice', status: 'shipped' }, description: 'A JSON object or array' })
  @IsJsonContainer()
  state!: Record<string, unknown> | unknown[];
}
