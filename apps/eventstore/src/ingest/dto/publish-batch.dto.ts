import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
import { PublishMessageDto } from './publish-message.dto.js';

/** A batch stored atomically with contiguous indices (I2). */
export class PublishBatchDto {
  @ApiProperty({ type: [PublishMessageDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => PublishMessageDto)
  messages!: PublishMessageDto[];
}
