import type { FastifyInstance } from 'fastify';
import type { RequestStep } from '../http/request-gate.js';
import { errorBody } from './error-body.js';
import type { HttpErrorCode } from '@ordinal/contract';

/** A route's path as a pattern over concrete paths: `:param` is one segment, `*` the rest. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':')
        ? '[^/]+'
        : segment === '*'
          ? '.*'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

/** Whether a route's path has a parameter (a `:name` segment), so it matches many paths. */
const parametric = (url: string) => url.includes(':');

/**
 * A request for a known path with a method it does not have gets 405 with `Allow` (RFC 9110)
 * instead of Fastify's 404: the routes are recorded as they are added, and only a request no
 * route matched is looked up. A path that is a route of its own (`/api/events/stream-ticket`,
 * POST) is never an instance of a parametric one (`GET /api/events/:index`): a method it lacks
 * is a 405 listing its own methods, not a 400 about an index.
 */
export function methodNotAllowed(fastify: FastifyInstance): RequestStep {
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  fastify.addHook('onRoute', (route) => {
    let entry = routes.get(route.url);
    if (!entry)
      routes.set(route.url, (entry = { pattern: patternOf(route.url), methods: new Set() }));
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  return (request, reply, route) => {
    const matched = route.url;
    // A matched route without parameters is the path's own: nothing to look up.
    if (matched !== undefined && !parametric(matched)) return undefined;
    const path = request.url.split('?', 1)[0];
    // A path with routes of its own allows only their methods.
    const own = parametric(path) ? undefined : routes.get(path)?.methods;
    if (matched !== undefined && (!own || own.has(request.method))) return undefined;
    const allowed = new Set<string>(own);
    if (!own)
      for (const { pattern, methods } of routes.values())
        if (pattern.test(path)) for (const m of methods) allowed.add(m);
    if (allowed.size === 0) return undefined;
    const allow = [...allowed].sort().join(', ');
    void reply
      .code(405)
      .header('allow', allow)
      .send(
        errorBody(405, `${request.method} is not allowed on ${path}; allowed: ${allow}`, {
          code: 'method_not_allowed' satisfies HttpErrorCode,
        }),
      );
    return true;
  };
}
