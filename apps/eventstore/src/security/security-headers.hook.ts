import type { FastifyInstance } from 'fastify';

/**
 * Every response says `X-Content-Type-Options: nosniff`, so a browser never reads a JSON answer
 * that echoes input (a 400 naming a bad field, say) as HTML or script. Set on the raw response
 * before anything else runs: Fastify's replies, Nest's error filter, the 405 and 408 hooks and
 * the SSE stream (which writes its own head) all merge it into what they send.
 */
export function registerSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.raw.setHeader('x-content-type-options', 'nosniff');
    done();
  });
}
