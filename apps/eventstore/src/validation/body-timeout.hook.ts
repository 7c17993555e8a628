import type { FastifyInstance } from 'fastify';
import { errorBody } from '../errors/error-body.js';
import type { HttpErrorCode } from '@ordinal/contract';

/**
 * A request whose body has not fully arrived `timeoutMs` after the request began is answered
 * 408 and its connection closed: a slow drip (one byte now and then) would otherwise hold a
 * connection, and a parser, for as long as the client likes. Node's own `requestTimeout` is
 * only checked every 30 s; this timer is per request and cleared when the response is sent.
 */
/** The media type of the one streamed body, the bulk import's. */
export const NDJSON = 'application/x-ndjson';

export function isStreamedBody(contentType: string | undefined): boolean {
  return contentType?.split(';')[0].trim().toLowerCase() === NDJSON;
}

export function registerBodyTimeout(fastify: FastifyInstance, timeoutMs: number): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    // A streamed import (NDJSON) is read as it arrives, as fast as the log takes it: no deadline.
    if (raw.complete || isStreamedBody(request.headers['content-type'])) return done();
    const timer = setTimeout(() => {
      if (raw.complete || reply.raw.headersSent) return;
      const body = JSON.stringify(
        errorBody(408, `The request body did not arrive within ${timeoutMs} ms`, {
          code: 'body_timeout' satisfies HttpErrorCode,
        }),
      );
      reply.raw.writeHead(408, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      reply.raw.end(body, () => raw.socket?.destroy());
    }, timeoutMs);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
    raw.once('end', () => clearTimeout(timer));
    done();
  });
}
