import { ApiProperty } from '@nestjs/swagger';
import type { ImportResult } from '@ordinal/log';

/**
 * The answer to `POST /api/events/import`: what was stored, as one contiguous range. The
 * contract's `ImportResult`; `openapi/client-contract.ts` checks that the keys are the same.
 */
export class ImportResponseDto implements ImportResult {
  @ApiProperty({ type: 'integer', minimum: 0, example: 1000, description: 'Non-blank lines read' })
  lines!: number;

  @ApiProperty({ type: 'integer', minimum: 0, example: 998, description: 'Messages stored' })
  imported!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: 2,
    description:
      'Lines skipped: their idempotency key was already stored (or came earlier in the file) for the same message',
  })
  repeats!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    example: 41,
    description: 'Index of the first stored message (null when none was)',
  })
  first!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    example: 1038,
    description: 'Index of the last stored message; every index in first..last is this import',
  })
  last!: number | null;
}
