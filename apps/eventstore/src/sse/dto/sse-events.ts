import { ApiProperty } from '@nestjs/swagger';
import type { SseEventData, SseEventName } from '@ordinal/contract';
import { MessageResponseDto } from '../../ingest/dto/message.response.js';
import { TombstoneResponseDto } from '../../events/dto/tombstone.response.js';

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

/** `event: tombstone` (`id:` = index): a hidden or erased message's position (docs/lifecycle.md). */
export class TombstoneEventDto {
  @ApiProperty({ type: TombstoneResponseDto })
  tombstone!: TombstoneResponseDto;
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

/** The schema of each event's data in the OpenAPI document (`x-sse-events`), by event name. */
export const SSE_EVENT_DTOS = {
  connected: ConnectedEventDto,
  message: MessageEventDto,
  tombstone: TombstoneEventDto,
  'late-message': MessageEventDto,
  heartbeat: HeartbeatEventDto,
  'stream-ended': StreamEndedEventDto,
} as const;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The map's names, then each event's DTO against the contract's data: all must hold. */
type Checks =
  | Same<keyof typeof SSE_EVENT_DTOS, SseEventName>
  // eslint-disable-next-line @typescript-eslint/no-duplicate-type-constituents -- each check is `true` when it holds: the union is `true` only when all do
  | {
      [N in SseEventName]: Same<InstanceType<(typeof SSE_EVENT_DTOS)[N]>, SseEventData<N>>;
    }[SseEventName];

/**
 * @internal Compiles only while `SSE_EVENT_DTOS` names exactly the contract's events and each
 * DTO is the contract's data for its event (the fields, their types, which are required).
 */
export const SSE_EVENT_DTOS_MATCH_CONTRACT: [Checks] extends [true] ? true : never = true;

/**
 * The schema of the `text/event-stream` response: each event as its fields (`event`, `id`
 * where it has one, `retry` on `connected`, `data` parsed as JSON), one alternative per event
 * of the contract, its `data` the event's DTO. The wire form is the SSE text format; this is
 * what each event carries.
 */
export function sseEventSchema(schemaPath: (dto: (typeof SSE_EVENT_DTOS)[SseEventName]) => string) {
  return {
    description:
      'One event of the stream, as its SSE fields (`data` is one line of JSON). On the wire: `event: <name>`, `id: <index>` (message only), `retry: <ms>` (connected only), `data: <json>`, a blank line.',
    oneOf: (Object.keys(SSE_EVENT_DTOS) as SseEventName[]).map((name) => ({
      type: 'object',
      title: name,
      required: name === 'message' ? ['event', 'id', 'data'] : ['event', 'data'],
      properties: {
        event: { type: 'string', enum: [name] },
        ...(name === 'message'
          ? { id: { type: 'string', description: "The message's index (Last-Event-ID to resume)" } }
          : {}),
        ...(name === 'connected'
          ? { retry: { type: 'integer', description: 'Reconnection delay for EventSource (ms)' } }
          : {}),
        data: { $ref: schemaPath(SSE_EVENT_DTOS[name]) },
      },
    })),
  };
}
