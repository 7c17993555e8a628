import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { IsJsonContainer } from './is-json-container.validator.js';

export const MESSAGE_TYPE_PATTERN = /^[A-Za-z0-9._:-]+$/;

/** One message to publish. */
export class PublishMessageDto {
  @ApiProperty({ example: 'OrderPlaced', description: '1-200 characters of [A-Za-z0-9._:-]' })
  @IsString()
  @Length(1, 200)
  @Matches(MESSAGE_TYPE_PATTERN, { message: 'messageType must be 1-200 characters of [A-Za-z0-9._:-]' })
  messageType!: string;

  @ApiPropertyOptional({ example: 'customer-1', nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  userId?: string | null;

  @ApiProperty({ example: { orderId: 'o-1001', total: 49.9 }, description: 'A JSON object or array' })
  @IsJsonContainer()
  content!: Record<string, unknown> | unknown[];

  @ApiPropertyOptional({ example: { source: 'order-form' } })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({ description: 'A repeat returns the original message (200), forever' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  idempotencyKey?: string;
}
