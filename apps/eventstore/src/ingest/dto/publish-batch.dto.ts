import { ApiProperty } from '@nestjs/swagger';
import { ArrayMinSize, IsArray } from 'class-validator';
import { NestedDtos } from '../../validation/nested-dto.decorator.js';
import { PublishMessageDto } from './publish-message.dto.js';

/** A batch stored atomically with contiguous indices; at most ORDINAL_MAX_BATCH messages (the controller enforces it). */
export class PublishBatchDto {
  @ApiProperty({
    type: [PublishMessageDto],
    minItems: 1,
    description:
      'At most ORDINAL_MAX_BATCH messages (default 1000); more is a 400 naming the limit',
  })
  @IsArray()
  @ArrayMinSize(1)
  @NestedDtos(() => PublishMessageDto)
  messages!: PublishMessageDto[];
}
