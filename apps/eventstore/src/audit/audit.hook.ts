import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthorisedRequest } from '../auth/auth.guard.js';
import type { Principal } from '../auth/principal.js';
import { ROUTE_SCOPE, type ScopedRouteConfig } from '../auth/route-access.js';
import { AuditTrail, type AuditedRequest, type AuditEntry } from './audit-trail.service.js';

/** The URL as sent, without a stream ticket (a bearer credential while it is unused). */
function safeUrl(url: string): string {
  return url.replace(/([?&]ticket=)[^&]*/g, '$1…');
}

/** `code`, `reason` and `tenant` of an error body, when the payload is one. */
function errorFields(payload: unknown): { code?: string; reason?: string; tenant?: string } {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return {};
  try {
    const body = JSON.parse(payload) as { code?: unknown; reason?: unknown; tenant?: unknown };
    return {
      ...(typeof body.code === 'string' ? { code: body.code } : {}),
      ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
      ...(typeof body.tenant === 'string' ? { tenant: body.tenant } : {}),
    };
  } catch {
    return {};
  }
}

/** The audit record of a request: who, what, when, from where. */
function entryOf(
  request: FastifyRequest,
  kind: AuditEntry['kind'],
  status: number,
  extra: Partial<AuditEntry> = {},
): AuditEntry {
  const tenant = (request as unknown as AuthorisedRequest).tenant;
  return {
    kind,
    who: AuditTrail.who((request as unknown as AuthorisedRequest).principal),
    what: {
      method: request.method,
      route: request.routeOptions.url ?? request.url.split('?')[0],
      url: safeUrl(request.url),
    },
    status,
    ...(tenant === undefined ? {} : { tenant }),
    ...extra,
    from: {
      ip: request.ip,
      ...(request.headers['user-agent'] ? { userAgent: request.headers['user-agent'] } : {}),
    },
    at: new Date().toISOString(),
  };
}

/** The record of a stream (a hijacked answer, which no hook sees) reading audited categories. */
export function recordStreamRead(
  trail: AuditTrail,
  request: FastifyRequest,
  principal: Principal,
): void {
  (request as unknown as AuthorisedRequest).principal ??= principal;
  const reads = (request as AuditedRequest).auditedReads;
  trail.record(entryOf(request, 'read', 200, { categories: [...(reads ?? [])] }));
}

/**
 * Writes one audit record per answered request that is an admin operation (a route scoped
 * `admin`), a denial (401 or 403, the early refusals before the body included), or a read of
 * an audited category (noted by the routes on the request): at most one record per request.
 * Streams (hijacked answers) are recorded by their routes.
 */
export function registerAuditHook(fastify: FastifyInstance, trail: AuditTrail): void {
  if (!trail.enabled) return;
  fastify.addHook('onSend', async (request: FastifyRequest, reply, payload) => {
    const status = reply.statusCode;
    const scope = (request.routeOptions.config as ScopedRouteConfig | undefined)?.[ROUTE_SCOPE];
    const reads = (request as AuditedRequest).auditedReads;
    const kind: AuditEntry['kind'] | null =
      status === 401 || status === 403
        ? 'denied'
        : scope === 'admin'
          ? 'admin'
          : reads && status < 400
            ? 'read'
            : null;
    if (kind === null) return payload;
    trail.record(
      entryOf(request, kind, status, {
        ...(kind === 'denied' ? errorFields(payload) : {}),
        ...(kind === 'read' ? { categories: [...reads!] } : {}),
      }),
    );
    return payload;
  });
}
