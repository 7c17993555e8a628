import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { TOMBSTONE_REASONS, type OrdinalTombstone, type TombstoneReason } from '@ordinal/contract';

/** Why the position is a tombstone. */
export class TombstoneReasonDto {
  @ApiProperty({ enum: TOMBSTONE_REASONS, example: 'deleted' })
  reason!: TombstoneReason;
}

/**
 * A position whose message is hidden or erased (docs/lifecycle.md): the index and the fields a
 * tombstone keeps; body and metadata are gone. The contract's `OrdinalTombstone`.
 */
export class TombstoneResponseDto implements OrdinalTombstone {
  @ApiProperty({ type: 'integer', minimum: 1, example: 42, description: 'The global index' })
  id!: number;

  @ApiProperty({ example: 'OrderPlaced' })
  messageType!: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-01T08:00:00.000Z' })
  createdAt!: string;

  @ApiPropertyOptional({ example: 'order-1001' })
  streamId?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1 })
  streamVersion?: number;

  @ApiPropertyOptional()
  correlationId?: string;

  @ApiPropertyOptional()
  causationId?: string;

  @ApiProperty({ type: TombstoneReasonDto })
  tombstone!: TombstoneReasonDto;
}
