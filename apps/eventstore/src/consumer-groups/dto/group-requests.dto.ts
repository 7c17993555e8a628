import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { OptionalBody } from '../../validation/optional-body.decorator.js';

/** Most indices one ack or nack names. */
export const MAX_SETTLE = 10_000;

/** `POST …/fetch` (no body: the defaults). */
@OptionalBody()
export class GroupFetchDto {
  @ApiPropertyOptional({ description: 'Omitted: a new member, given an id in the answer' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  memberId?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 10_000,
    default: 100,
    description: '0: only renew the lease (a heartbeat while the member works on what it holds)',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10_000)
  max?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 30_000, default: 0 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(30_000)
  waitMs?: number;
}

/** `POST …/ack`. */
export class GroupAckDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  memberId!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  epoch!: number;

  @ApiProperty({ type: [Number], minItems: 1, maxItems: MAX_SETTLE })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SETTLE)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(Number.MAX_SAFE_INTEGER, { each: true })
  indices!: number[];
}

/** `POST …/nack`. */
export class GroupNackDto extends GroupAckDto {
  @ApiProperty({ enum: ['retry', 'park', 'skip'] })
  @IsIn(['retry', 'park', 'skip'])
  action!: 'retry' | 'park' | 'skip';

  @ApiPropertyOptional({ maxLength: 4000 })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  reason?: string;
}

/** `POST …/parked/replay` (no body: the defaults). */
@OptionalBody()
export class GroupReplayDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 10_000, default: 100 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000)
  limit?: number;
}
