import { applyDecorators } from '@nestjs/common';
import { ApiQuery, ApiSecurity } from '@nestjs/swagger';
import { AcceptsTicket } from './scopes.decorator.js';

/**
 * A stream route a browser's EventSource can open: it takes a stream ticket (`?ticket=`, from
 * `POST /api/events/stream-ticket`, single-use, with its identity's rights) when no
 * Authorization header is sent, and the OpenAPI document says so.
 */
export function TicketAuth(): MethodDecorator {
  return applyDecorators(
    AcceptsTicket(),
    ApiSecurity('ticket'),
    ApiQuery({
      name: 'ticket',
      required: false,
      description:
        'A stream ticket (POST /api/events/stream-ticket) instead of the Authorization header',
      schema: { type: 'string' },
    }),
  );
}
