import { applyDecorators } from '@nestjs/common';
import {
  ApiExtension,
  ApiExtraModels,
  ApiHeader,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { SSE_EVENT_NAMES } from '@ordinal/contract';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { SSE_EVENT_DTOS, sseEventSchema } from './dto/sse-events.js';

/** `x-sse-events`: each of the contract's events, in its order, with its data's schema. */
const SSE_EVENTS_EXTENSION = Object.fromEntries(
  SSE_EVENT_NAMES.map((name) => [name, { $ref: getSchemaPath(SSE_EVENT_DTOS[name]) }]),
);

/**
 * What the document says of an event stream of the log (`GET /api/events/stream` and a
 * tenant's): its query parameters, `Last-Event-ID`, its events and its answers.
 */
export function ApiEventStream(): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(...new Set(Object.values(SSE_EVENT_DTOS))),
    ApiProduces('text/event-stream'),
    ApiQuery({
      name: 'startIndex',
      required: false,
      description: 'First index to send (0 means 1)',
      schema: { type: 'integer', minimum: 0, default: 1 },
    }),
    ApiQuery({
      name: 'endIndex',
      required: false,
      description: 'Send up to this index, then `stream-ended`',
      schema: { type: 'integer', minimum: 0 },
    }),
    ApiQuery({
      name: 'types',
      required: false,
      description: 'Comma-separated message types',
      schema: { type: 'string' },
    }),
    ApiQuery({
      name: 'shardCount',
      required: false,
      description: 'With shardIndex',
      schema: { type: 'integer', minimum: 1, maximum: 1000000 },
    }),
    ApiQuery({
      name: 'shardIndex',
      required: false,
      description: 'Below shardCount',
      schema: { type: 'integer', minimum: 0 },
    }),
    ApiQuery({
      name: 'tombstones',
      required: false,
      description:
        '`skip`: leave out the positions whose message is hidden or erased (docs/lifecycle.md); by default each comes as a tombstone',
      schema: { type: 'string', enum: ['include', 'skip'], default: 'include' },
    }),
    ApiQuery({
      name: 'tiers',
      required: false,
      description:
        '`hot`: answer 409 `index_archived` when the stream would start in an archived segment, instead of reading it from the archive store (docs/storage.md)',
      schema: { type: 'string', enum: ['all', 'hot'], default: 'all' },
    }),
    ApiHeader({
      name: 'Last-Event-ID',
      required: false,
      description: 'Resume after this index (wins over startIndex)',
      schema: { type: 'integer', minimum: 0 },
    }),
    ApiResponse({
      status: 200,
      description:
        'The event stream, for example `event: connected` / `retry: 2000` / `data: {"startIndex":1,"headIndex":4}`, a blank line, then `event: message` / `id: 2` / `data: {"message":{"id":2,…}}`, a blank line, …',
      content: {
        'text/event-stream': { schema: sseEventSchema(getSchemaPath) },
      },
    }),
    ApiResponse({
      status: 204,
      description:
        'A resumed request (Last-Event-ID) at or past endIndex: nothing left, a standard EventSource stops',
    }),
    ApiErrors(400, 409, 503),
    ApiExtension('x-sse-events', SSE_EVENTS_EXTENSION),
  );
}
