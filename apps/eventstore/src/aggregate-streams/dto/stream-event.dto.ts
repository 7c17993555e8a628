import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { JSON_CONTAINER_SCHEMA } from '../../openapi/json-value.js';
import { IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { IsJsonContainer } from '../../ingest/dto/is-json-container.validator.js';
import { MESSAGE_TYPE_PATTERN } from '../../ingest/dto/publish-message.dto.js';

/** One event of a stream append. */
export class StreamEventDto {
  @ApiProperty({
    example: 'OrderPlaced',
    pattern: '^[A-Za-z0-9._:-]{1,200}$',
    description: '1-200 characters of [A-Za-z0-9._:-]',
  })
  @IsString()
  @Length(1, 200)
  @Matches(MESSAGE_TYPE_PATTERN, {
    message: 'eventType must be 1-200 characters of [A-Za-z0-9._:-]',
  })
  eventType!: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 2147483647,
    example: 1,
    description: 'Schema version of data, for upcasting (default 1)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  schemaVersion?: number;

  @ApiProperty({
    ...JSON_CONTAINER_SCHEMA,
    example: { customer: 'alice', total: 49.98 },
    description: 'A JSON object or array',
  })
  @IsJsonContainer()
  data!: Record<string, unknown> | unknown[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { correlationId: 'c-1' },
  })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown> | null;
}
