import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { MessageResponseDto } from './message.response.js';

/** 202: the body repeats one inside the duplicate window; nothing was stored. */
export class DuplicateResponseDto {
  @ApiProperty({ enum: ['duplicate'] })
  status!: 'duplicate';

  @ApiProperty()
  contentHash!: string;

  @ApiPropertyOptional()
  message?: string;
}

/** One entry of a batch's answer, in order: the stored (or original) message with its status. */
export class BatchEntryDto extends PartialType(MessageResponseDto) {
  @ApiProperty({
    enum: ['created', 'repeat', 'duplicate', 'key_reused'],
    description:
      '`key_reused`: the idempotency key stored another message (this one was not stored)',
  })
  status!: 'created' | 'repeat' | 'duplicate' | 'key_reused';

  @ApiPropertyOptional({ enum: ['idempotency_key_reused'] })
  code?: string;
}

/** The answer to `POST /api/events/messages`. */
export class BatchResponseDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  count!: number;

  @ApiProperty({ type: [BatchEntryDto] })
  messages!: BatchEntryDto[];
}
