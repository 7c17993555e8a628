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
import {
  GROUP_SETTING_LIMITS as LIMITS,
  GROUP_STRATEGIES,
  MAX_KEY_PATH,
  type GroupStrategy,
} from '@ordinal/subscriptions';

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

  @ApiPropertyOptional({ enum: GROUP_STRATEGIES, default: 'round_robin' })
  @IsOptional()
  @IsIn(GROUP_STRATEGIES)
  strategy?: GroupStrategy;

  @ApiPropertyOptional({ description: 'pinned_by_key only: a dotted path, e.g. `body.customerId`' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_KEY_PATH)
  keyPath?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: LIMITS.ackTimeoutMs.min,
    maximum: LIMITS.ackTimeoutMs.max,
    default: 30_000,
  })
  @IsOptional()
  @IsInt()
  @Min(LIMITS.ackTimeoutMs.min)
  @Max(LIMITS.ackTimeoutMs.max)
  ackTimeoutMs?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: LIMITS.maxDeliveries.min,
    maximum: LIMITS.maxDeliveries.max,
    default: 10,
  })
  @IsOptional()
  @IsInt()
  @Min(LIMITS.maxDeliveries.min)
  @Max(LIMITS.maxDeliveries.max)
  maxDeliveries?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: LIMITS.maxInFlight.min,
    maximum: LIMITS.maxInFlight.max,
    default: 100,
  })
  @IsOptional()
  @IsInt()
  @Min(LIMITS.maxInFlight.min)
  @Max(LIMITS.maxInFlight.max)
  maxInFlight?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: LIMITS.parkAfter.min,
    maximum: LIMITS.parkAfter.max,
    description: '`nack` retries after which an event is parked (default: maxDeliveries)',
  })
  @IsOptional()
  @IsInt()
  @Min(LIMITS.parkAfter.min)
  @Max(LIMITS.parkAfter.max)
  parkAfter?: number;
}
