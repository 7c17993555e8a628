import { BadRequestException } from '@nestjs/common';
import type { ErrorCode } from '@ordinal/contract';

/**
 * A 400 for one request parameter (query, path, or the event stream's `Last-Event-ID`):
 * `{message, code, parameter}`, so a program can switch on the code and point at the parameter
 * without reading the message. `code` is `invalid_parameter` unless the parameter has a more
 * specific one (`repeated_parameter`, `invalid_stream_id`).
 */
export function parameterError(
  parameter: string,
  message: string,
  code: ErrorCode = 'invalid_parameter',
): BadRequestException {
  return new BadRequestException({ message, code, parameter });
}
