import type { FastifyInstance } from 'fastify';
import { Histogram, type Registry } from 'prom-client';

/**
 * `ordinal_http_request_duration_seconds{method, route, status}`: every answered request, by
 * its route's pattern (`/api/events/:index`, so the label stays bounded; `unmatched` for paths
 * no route has) and status. Streams taken over by SSE are not in it (they last for minutes).
 */
export function registerHttpMetrics(fastify: FastifyInstance, registry: Registry): void {
  const duration = new Histogram({
    name: 'ordinal_http_request_duration_seconds',
    help: 'HTTP requests answered, by method, route pattern and status, and how long they took',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    duration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
