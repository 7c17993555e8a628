import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The matched route's config (`url` undefined when no route matched), as Fastify keeps it. */
export type RouteConfig = { url?: string; method?: string | string[] } & Record<string, unknown>;

/**
 * What one step of the gate decided: go on (undefined), the request is answered (true: the
 * step sent the reply, later steps do not run), or an error for Fastify's error handling.
 */
export type StepOutcome = undefined | true | Error;

/** One of the server's checks on a request as it begins (see `registerRequestGate`). */
export type RequestStep = (
  request: FastifyRequest,
  reply: FastifyReply,
  route: RouteConfig,
) => StepOutcome;

/** The last step, which may have to wait (an identity provider's keys): it calls `done` itself. */
export type FinalRequestStep = (
  request: FastifyRequest,
  reply: FastifyReply,
  route: RouteConfig,
  done: (error?: Error) => void,
) => void;

/**
 * The server's own `onRequest` work as one Fastify hook: the steps run in order, each as its
 * own hook did, and the first that answers or refuses ends the request's way through them.
 * One hook instead of one a concern saves Fastify's hook iteration per step, and the route's
 * config is read once (`request.routeOptions` builds an object at every read).
 */
export function registerRequestGate(
  fastify: FastifyInstance,
  steps: readonly RequestStep[],
  last: FinalRequestStep,
): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.config as unknown as RouteConfig;
    for (const step of steps) {
      const outcome = step(request, reply, route);
      if (outcome === true) return;
      if (outcome !== undefined) return done(outcome);
    }
    last(request, reply, route, done);
  });
}
