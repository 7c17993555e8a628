import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { MessageResponseDto } from '../../ingest/dto/message.response.js';
import { TombstoneResponseDto } from './tombstone.response.js';

/** The safe head: the highest index any reader may see. */
export class HeadResponseDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 41 })
  head!: number;
}

/** One JSON page of the log; continue from `nextIndex`. */
@ApiExtraModels(MessageResponseDto, TombstoneResponseDto)
export class PageResponseDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  fromIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  head!: number;

  @ApiProperty({ type: 'integer', minimum: 1 })
  nextIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  count!: number;

  @ApiProperty({
    type: 'array',
    items: {
      oneOf: [
        { $ref: getSchemaPath(MessageResponseDto) },
        { $ref: getSchemaPath(TombstoneResponseDto) },
      ],
    },
    description:
      'Each position in the range: its message, or its tombstone when the message is hidden or erased (docs/lifecycle.md)',
  })
  messages!: (MessageResponseDto | TombstoneResponseDto)[];
}
