import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { JSON_CONTAINER_SCHEMA } from '../../openapi/json-value.js';
import { IsObject, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { IsJsonContainer } from './is-json-container.validator.js';

export const MESSAGE_TYPE_PATTERN = /^[A-Za-z0-9._:-]+$/;

/** One message to publish. */
export class PublishMessageDto {
  @ApiProperty({
    example: 'OrderPlaced',
    pattern: '^[A-Za-z0-9._:-]{1,200}$',
    description: '1-200 characters of [A-Za-z0-9._:-]',
  })
  @IsString()
  @Length(1, 200)
  @Matches(MESSAGE_TYPE_PATTERN, {
    message: 'messageType must be 1-200 characters of [A-Za-z0-9._:-]',
  })
  messageType!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 200,
    example: 'customer-1',
    description: 'Decides the shard of sharded readers',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  userId?: string | null;

  @ApiProperty({
    ...JSON_CONTAINER_SCHEMA,
    example: { orderId: 'o-1001', total: 49.9 },
    description:
      'A JSON object or array, within the JSON rules of docs/ingestion.md (depth 100, exact numbers, no NUL)',
  })
  @IsJsonContainer()
  content!: Record<string, unknown> | unknown[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { source: 'order-form' },
  })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description:
      'A repeat of the same request returns the original message (200), forever; another request with it is a 422',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  idempotencyKey?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description:
      "This message's correlation; default: the X-Correlation-Id header, else the traceparent's trace id, else a new UUID for the request",
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  correlationId?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description:
      'What caused this message (a message index as text, or a command or request id); default: the correlation id',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  causationId?: string;
}
