import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { inexactNumberIn } from '@ordinal/pg';
import type { ErrorCode } from '@ordinal/contract';

/** A 400 from the body parser, shaped as Fastify's own so the errors filter words it the same. */
function badBody(message: string, code: ErrorCode): Error {
  return Object.assign(new Error(message), { statusCode: 400, code });
}

/**
 * Replaces Fastify's JSON body parser. The body is read as bytes so that text which is not
 * UTF-8 is refused (a decoder would silently turn it into U+FFFD); a number JSON.parse would
 * round (`inexactNumberIn`) is refused naming its path; the text is parsed with plain
 * `JSON.parse`: `__proto__` and `constructor` are then ordinary own keys, as they are on the
 * AMQP input and in PostgreSQL; nothing downstream copies a body with `Object.assign` over
 * undeclared fields (DtoValidationPipe refuses those first).
 */
export function registerJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (
      _request: FastifyRequest,
      body: Buffer,
      done: (error: Error | null, value?: unknown) => void,
    ) => {
      if (body.length === 0)
        return done(
          badBody(
            "Body cannot be empty when content-type is set to 'application/json'",
            'empty_body',
          ),
        );
      if (!isUtf8(body))
        return done(
          badBody('The body is not valid UTF-8; send JSON text encoded as UTF-8', 'invalid_utf8'),
        );
      let text = body.toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        return done(
          badBody(
            `Body is not valid JSON but content-type is set to 'application/json' (${(error as Error).message})`,
            'invalid_json',
          ),
        );
      }
      const inexact = inexactNumberIn(text, '');
      if (inexact) return done(badBody(`${inexact.path} ${inexact.reason}`, 'invalid_message'));
      done(null, value);
    },
  );
}
