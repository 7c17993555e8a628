import { ApiProperty } from '@nestjs/swagger';

/** One member of a group. */
export class GroupMemberDto {
  @ApiProperty()
  memberId!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  epoch!: number;

  @ApiProperty({ description: 'False once declared dead (its old epoch is refused)' })
  alive!: boolean;

  @ApiProperty({ type: 'integer', minimum: 0 })
  inFlight!: number;

  @ApiProperty({ description: 'The server process (host:pid) that served it last' })
  server!: string;

  @ApiProperty({ format: 'date-time' })
  leaseExpiresAt!: string;

  @ApiProperty({ format: 'date-time' })
  lastSeenAt!: string;
}

/** `GET /api/consumer-groups/:group`. */
export class ConsumerGroupDto {
  @ApiProperty()
  group!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'With defaults applied' })
  definition!: Record<string, unknown>;

  @ApiProperty({ enum: ['active', 'idle'] })
  state!: string;

  @ApiProperty({ type: [GroupMemberDto] })
  members!: GroupMemberDto[];

  @ApiProperty({ type: 'integer', minimum: 0 })
  checkpoint!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  head!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  lag!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  inFlight!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Read from the log, waiting for a member',
  })
  ready!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  parked!: number;
}

/** `GET /api/consumer-groups`. */
export class ConsumerGroupListDto {
  @ApiProperty({ type: [ConsumerGroupDto] })
  groups!: ConsumerGroupDto[];
}

/** `POST …/fetch`. */
export class GroupFetchResponseDto {
  @ApiProperty()
  memberId!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  epoch!: number;

  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description:
      'Each: the message fields, `index`, `deliveryAttempt` (1 the first time) and `late`',
  })
  events!: Array<Record<string, unknown>>;
}

/** `POST …/ack` and `POST …/nack`. */
export class GroupSettleResponseDto {
  @ApiProperty({ type: [Number], required: false, description: 'ack: the indices acknowledged' })
  acknowledged?: number[];

  @ApiProperty({ type: [Number], required: false, description: 'nack: the indices given back' })
  nacked?: number[];

  @ApiProperty({ type: [Number], description: 'Indices the member does not hold; unchanged' })
  notHeld!: number[];

  @ApiProperty({ type: 'integer', minimum: 0 })
  checkpoint!: number;
}

/** A parked reference. */
export class GroupParkedDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  index!: number;

  @ApiProperty()
  reason!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  parkedAt!: string;
}

/** `GET …/parked`. */
export class GroupParkedListDto {
  @ApiProperty()
  group!: string;

  @ApiProperty({ type: [GroupParkedDto] })
  parked!: GroupParkedDto[];
}

/** `POST …/parked/replay`. */
export class GroupReplayResponseDto {
  @ApiProperty({ type: [Number], description: 'Put back to be delivered again' })
  replayed!: number[];

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Unchanged by a replay' })
  checkpoint!: number;
}
