import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray } from 'class-validator';
import { NestedDtos } from '../../validation/nested-dto.decorator.js';
import { PublishMessageDto } from './publish-message.dto.js';

/** A batch stored atomically with contiguous indices (I2). */
export class PublishBatchDto {
  @ApiProperty({ type: [PublishMessageDto], minItems: 1, maxItems: 1000 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @NestedDtos(() => PublishMessageDto)
  messages!: PublishMessageDto[];
}
