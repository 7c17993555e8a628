import { ApiProperty } from '@nestjs/swagger';

/** Why and when the broker dead-lettered a message (its `x-death` header, first entry). */
export class DeathDto {
  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;

  @ApiProperty({ type: String, nullable: true })
  time!: string | null;
}

/** One message of the input's dead-letter queue. */
export class DeadLetterDto {
  @ApiProperty({ type: String, nullable: true })
  messageType!: string | null;

  @ApiProperty({ type: String, nullable: true })
  userId!: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true })
  headers!: Record<string, unknown>;

  @ApiProperty({
    description: 'The body as text (it may not be JSON: that is often why it was rejected)',
  })
  body!: string;

  @ApiProperty({ type: DeathDto, nullable: true })
  death!: DeathDto | null;
}

/** `GET /api/dead-letters`. */
export class DeadLettersResponseDto {
  @ApiProperty({ example: 'eventstore.input.rejected' })
  queue!: string;

  @ApiProperty({ type: 'integer', description: 'Every dead letter in the queue now' })
  count!: number;

  @ApiProperty({
    type: [DeadLetterDto],
    description: 'The first `limit` of them, left in the queue',
  })
  messages!: DeadLetterDto[];
}

/** `POST /api/dead-letters/redrive`. */
export class RedriveResponseDto {
  @ApiProperty({ example: 'eventstore.input.rejected' })
  from!: string;

  @ApiProperty({ example: 'eventstore.input' })
  to!: string;

  @ApiProperty({ type: 'integer' })
  moved!: number;
}

/** `POST /api/interfaces/:name/rewind`. */
export class RewindResponseDto {
  @ApiProperty()
  name!: string;

  @ApiProperty({
    type: 'integer',
    description: 'The bookmark now: every message after it is sent again',
  })
  bookmark!: number;
}
