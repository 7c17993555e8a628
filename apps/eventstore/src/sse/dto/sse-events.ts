import { ApiProperty } from '@nestjs/swagger';
import { MessageResponseDto } from '../../ingest/dto/message.response.js';

/** `event: connected` (once, first; carries `retry:`). */
export class ConnectedEventDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  startIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'The head when the stream connected' })
  headIndex!: number;
}

/** `event: message` (`id:` = index) and `event: late-message` (no `id:`). */
export class MessageEventDto {
  @ApiProperty({ type: MessageResponseDto })
  message!: MessageResponseDto;
}

/** `event: heartbeat`, every ORDINAL_HEARTBEAT_MS. */
export class HeartbeatEventDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  headIndex!: number;
}

/** `event: stream-ended`, once `endIndex` is reached; then the stream closes. */
export class StreamEndedEventDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  endIndex!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The last message sent, or null' })
  lastIndex!: number | null;
}
