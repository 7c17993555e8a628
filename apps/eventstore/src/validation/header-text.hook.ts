import { isUtf8 } from 'node:buffer';
import type { RequestStep } from '../http/request-gate.js';
import { HTTP_STATUS_BY_CODE } from '../errors/status-by-code.js';
import type { HttpErrorCode } from '@ordinal/contract';

/**
 * The headers the server reads as text (a key or an id it stores or compares): a value that is
 * not UTF-8 is refused rather than guessed at.
 */
export const TEXT_HEADERS = ['idempotency-key', 'x-correlation-id', 'last-event-id'] as const;

/** A character Node made of one byte above 0x7f (it reads header bytes as Latin-1). */
const HIGH_BYTE = /[\x80-\xff]/;

/**
 * The one place header values become text. Node hands them over one character per byte
 * (Latin-1), so UTF-8 `clé` would read `clÃ©` and a key sent in `Idempotency-Key` would not be
 * the same key sent in the body. Every value with a byte above 0x7f is decoded as UTF-8 here,
 * before any route, guard or hook reads it; a value of `TEXT_HEADERS` that is not UTF-8 is a
 * 400 `invalid_utf8` naming the header. (Other headers that are not UTF-8 stay as sent: the
 * server does not read them as text.)
 */
export const headerText: RequestStep = (request) => {
  const headers = request.headers;
  for (const name in headers) {
    const value = headers[name];
    if (typeof value !== 'string' || !HIGH_BYTE.test(value)) continue;
    const bytes = Buffer.from(value, 'latin1');
    if (isUtf8(bytes)) headers[name] = bytes.toString('utf8');
    else if ((TEXT_HEADERS as readonly string[]).includes(name)) {
      const code = 'invalid_utf8' satisfies HttpErrorCode;
      const error = new Error(
        `The ${name} header is not valid UTF-8; send its value as UTF-8 bytes (or send the value in the body)`,
      );
      return Object.assign(error, { statusCode: HTTP_STATUS_BY_CODE[code], code });
    }
  }
  return undefined;
};
