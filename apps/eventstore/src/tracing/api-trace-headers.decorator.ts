import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';

/** The W3C `traceparent` the server continues (version-traceid-parentid-flags, lower-case hex). */
export const TRACEPARENT_PATTERN =
  '^[0-9a-fA-F]{2}-[0-9a-fA-F]{32}-[0-9a-fA-F]{16}-[0-9a-fA-F]{2}$';

/**
 * Declares the two tracing headers every operation accepts, so typed clients generated from
 * the document can send them: `X-Correlation-Id` (the correlation of what the request appends)
 * and `traceparent` (W3C trace context; the request's span continues it). Put on every API
 * controller class; the OpenAPI lint spec checks that every operation has both.
 */
export function ApiTraceHeaders(): ClassDecorator & MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: 'X-Correlation-Id',
      required: false,
      description:
        "The correlation id of what this request appends (1-200 characters; a bad one is a 400 where the request appends). Default: the traceparent's trace id, else a new UUID. Operations that append nothing ignore it",
      schema: { type: 'string', minLength: 1, maxLength: 200 },
    }),
    ApiHeader({
      name: 'traceparent',
      required: false,
      description:
        "W3C trace context: the request's span (and what it appends) continues this trace. A malformed value is ignored",
      schema: { type: 'string', pattern: TRACEPARENT_PATTERN },
    }),
  );
}
