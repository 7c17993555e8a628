import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestStep } from '../http/request-gate.js';
import { performance } from 'node:perf_hooks';
import { errorBody } from '../errors/error-body.js';
import type { HttpErrorCode } from '@ordinal/contract';

/** The media type of the one streamed body, the bulk import's. */
export const NDJSON = 'application/x-ndjson';

export function isStreamedBody(contentType: string | undefined): boolean {
  // The common case, without splitting and lower-casing the header.
  if (contentType === undefined || contentType === 'application/json') return false;
  return contentType.split(';')[0].trim().toLowerCase() === NDJSON;
}

/** A request the hook saw begin, and when its body must have arrived (performance.now()). */
interface Watched {
  raw: FastifyRequest['raw'];
  reply: FastifyReply;
  deadline: number;
}

/**
 * A request whose body has not fully arrived `timeoutMs` after the request began is answered
 * 408 and its connection closed: a slow drip (one byte now and then) would otherwise hold a
 * connection, and a parser, for as long as the client likes. Node's own `requestTimeout` is
 * only checked every 30 s.
 *
 * Most bodies arrive in the same read as their headers, so the parser has finished them by
 * the end of the turn of the event loop in which the request began. The hook only notes each
 * request with its deadline; one `setImmediate` a turn (not one timer and two listeners a
 * request) drops those whose body is complete and gives the others a timer for what is left
 * of their time, cleared when the body ends or the response closes, as before.
 */
export function bodyTimeout(timeoutMs: number): RequestStep {
  const answer408 = (raw: Watched['raw'], reply: FastifyReply) => {
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
  };
  const watch = ({ raw, reply, deadline }: Watched) => {
    const timer = setTimeout(answer408, Math.max(0, deadline - performance.now()), raw, reply);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
    raw.once('end', () => clearTimeout(timer));
  };
  let begun: Watched[] = [];
  const sweep = () => {
    const requests = begun;
    begun = [];
    for (const request of requests) {
      const { raw, reply } = request;
      // Answered already, or gone (a timer would then never be cleared, nor needed).
      if (raw.complete || reply.raw.headersSent || raw.socket?.destroyed !== false) continue;
      watch(request);
    }
  };
  return (request, reply) => {
    const raw = request.raw;
    // A streamed import (NDJSON) is read as it arrives, as fast as the log takes it: no deadline.
    if (raw.complete || isStreamedBody(request.headers['content-type'])) return undefined;
    if (begun.length === 0) setImmediate(sweep);
    begun.push({ raw, reply, deadline: performance.now() + timeoutMs });
    return undefined;
  };
}
