import type { RequestStep } from '../http/request-gate.js';

/**
 * Every response says `X-Content-Type-Options: nosniff`, so a browser never reads a JSON answer
 * that echoes input (a 400 naming a bad field, say) as HTML or script. Set on the raw response
 * first of the request gate's steps: Fastify's replies, Nest's error filter, the 405 and 408
 * answers and the SSE stream (which writes its own head) all merge it into what they send.
 */
export const securityHeaders: RequestStep = (_request, reply) => {
  reply.raw.setHeader('x-content-type-options', 'nosniff');
  return undefined;
};
