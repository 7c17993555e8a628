import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
import { PublishMessageDto } from './publish-message.dto.js';

/** A batch stored atomically with contiguous indices; at most ORDINAL_MAX_BATCH messages (the controller enforces it). */
export class PublishBatchDto {
  @ApiProperty({ type: [PublishMessageDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ValidateNested({ each: true })
  @Type(() => PublishMessageDto)
  messages!: PublishMessageDto[];
}
