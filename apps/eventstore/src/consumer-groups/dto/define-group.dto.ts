import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';

/** `PUT /api/consumer-groups/:group`: a group's definition (docs/consumer-groups.md). */
export class DefineGroupDto {
  @ApiProperty({
    description: 'Exactly one of `{types: [..]}`, `{category: ".."}` or `{all: true}`',
    type: 'object',
    additionalProperties: true,
    example: { types: ['OrderPlaced'] },
  })
  @IsObject()
  source!: Record<string, unknown>;

  @ApiPropertyOptional({
    description: '`start`, `end` or an index (the first event delivered is the first after it)',
    oneOf: [
      { type: 'string', enum: ['start', 'end'] },
      { type: 'integer', minimum: 0 },
    ],
    default: 'start',
  })
  @IsOptional()
  @Allow()
  from?: unknown;

  @ApiPropertyOptional({
    enum: ['round_robin', 'pinned_by_stream', 'pinned_by_key'],
    default: 'round_robin',
  })
  @IsOptional()
  @IsIn(['round_robin', 'pinned_by_stream', 'pinned_by_key'])
  strategy?: 'round_robin' | 'pinned_by_stream' | 'pinned_by_key';

  @ApiPropertyOptional({ description: 'pinned_by_key only: a dotted path, e.g. `body.customerId`' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  keyPath?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 100, maximum: 86_400_000, default: 30_000 })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  ackTimeoutMs?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 10 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  maxDeliveries?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 10_000, default: 100 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000)
  maxInFlight?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1000,
    description: '`nack` retries after which an event is parked (default: maxDeliveries)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  parkAfter?: number;
}
