import { ApiProperty } from '@nestjs/swagger';
import { MessageResponseDto } from '../../ingest/dto/message.response.js';

/** The safe head: the highest index any reader may see. */
export class HeadResponseDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 41 })
  head!: number;
}

/** One JSON page of the log; continue from `nextIndex`. */
export class PageResponseDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  fromIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  head!: number;

  @ApiProperty({ type: 'integer', minimum: 1 })
  nextIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  count!: number;

  @ApiProperty({ type: [MessageResponseDto] })
  messages!: MessageResponseDto[];
}
