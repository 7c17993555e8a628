import { BadRequestException, ForbiddenException } from '@nestjs/common';
import type { ErrorCode, HttpErrorCode } from '@ordinal/contract';
import { isTenantId } from '@ordinal/log';
import { principalLabel, type Principal } from './principal.js';

/** The header a trusted principal names the tenant a request acts for with (docs/tenants.md). */
export const TENANT_HEADER = 'Ordinal-Tenant';
const HEADER_KEY = 'ordinal-tenant';

/**
 * How a route treats tenants (`Scoped`'s second argument):
 * - `header`: per tenant; the request acts for the principal's tenant, or the one a trusted
 *   principal names in `Ordinal-Tenant`;
 * - `path`: per tenant; the tenant is the route's `:tenant` path parameter;
 * - absent: not per tenant (operators' routes: consumer groups, push interfaces, imports,
 *   administration): refused to a principal bound to a tenant and to a request that names one.
 */
export type Tenancy = 'header' | 'path';

/** A request as the tenant check reads it (Fastify's). */
export interface TenantedRequest {
  headers: Record<string, string | string[] | undefined>;
  raw?: { rawHeaders?: string[] };
  params?: unknown;
}

/** 403 `tenant_forbidden`: the principal may not act for the tenant (or for none, on an operator's route). */
export class TenantForbiddenException extends ForbiddenException {
  constructor(
    message: string,
    /** Who was refused (the audit trail names it). */
    readonly principal: Principal,
    /** The tenant asked for, when one was (a tenant id: safe to show). */
    tenant?: string,
  ) {
    super({
      message,
      code: 'tenant_forbidden' satisfies HttpErrorCode,
      ...(tenant === undefined ? {} : { tenant }),
    });
  }
}

/** 400 `invalid_tenant`, naming the header or path parameter. */
function invalidTenant(parameter: string, message: string): BadRequestException {
  return new BadRequestException({
    message,
    code: 'invalid_tenant' satisfies ErrorCode,
    parameter,
  });
}

const TENANT_RULE = "1-63 letters, digits, '_' or '.', starting with a letter or digit";

/** A value as a 400 may quote it: short, and only printable ASCII. */
function quoted(value: string): string {
  const shown = value.slice(0, 40).replace(/[^\x20-\x7e]/g, '?');
  return value.length > 40 ? `'${shown}…' (${value.length} characters)` : `'${shown}'`;
}

/**
 * The tenant the `Ordinal-Tenant` header names, undefined when it is not sent; 400
 * `invalid_tenant` when it is sent more than once, empty, or not a tenant id. (Leading and
 * trailing spaces are not part of an HTTP header's value: the parser drops them.)
 */
export function headerTenant(request: TenantedRequest): string | undefined {
  const raw = request.raw?.rawHeaders;
  let count = 0;
  if (raw) for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === HEADER_KEY) count++;
  const value = request.headers[HEADER_KEY];
  if (value === undefined && count === 0) return undefined;
  if (count > 1 || Array.isArray(value))
    throw invalidTenant(
      TENANT_HEADER,
      `${TENANT_HEADER} is given ${Math.max(count, 2)} times; send it once, naming one tenant`,
    );
  if (!isTenantId(value))
    throw invalidTenant(
      TENANT_HEADER,
      `${TENANT_HEADER} must be a tenant id (${TENANT_RULE}), got ${quoted(value ?? '')}`,
    );
  return value;
}

/** The `:tenant` path parameter; 400 `invalid_tenant` when it is not a tenant id. */
export function pathTenant(request: TenantedRequest): string {
  const value = (request.params as Record<string, unknown> | undefined)?.tenant;
  if (!isTenantId(value))
    throw invalidTenant(
      'tenant',
      `The path's tenant must be a tenant id (${TENANT_RULE}), got ${quoted(typeof value === 'string' ? value : '')}`,
    );
  return value;
}

/**
 * The tenant `principal` acts for when it asks for `requested` (undefined: it asks for none).
 * None asked: its own tenant, or none. One asked: allowed when it is the principal's own
 * tenant, or when the principal has the `tenants` scope and no tenant of its own; otherwise
 * 403 `tenant_forbidden`, never a switch.
 */
export function tenantFor(principal: Principal, requested: string | undefined): string | undefined {
  if (requested === undefined || requested === principal.tenant) return principal.tenant;
  if (principal.tenant !== undefined)
    throw new TenantForbiddenException(
      `${principalLabel(principal)} acts for its own tenant only; it may not act for tenant '${requested}'`,
      principal,
      requested,
    );
  if (!principal.scopes.has('tenants'))
    throw new TenantForbiddenException(
      `${principalLabel(principal)} lacks the 'tenants' scope: it may not act for tenant '${requested}'`,
      principal,
      requested,
    );
  return requested;
}

/**
 * The tenant a request acts for on a route of the given tenancy, or a refusal (400
 * `invalid_tenant`, 403 `tenant_forbidden`). A route that is not per tenant refuses a
 * principal bound to one, and a request that names one.
 */
export function requestTenant(
  request: TenantedRequest,
  principal: Principal,
  tenancy: Tenancy | undefined,
): string | undefined {
  if (tenancy === 'header') return tenantFor(principal, headerTenant(request));
  if (tenancy === 'path') {
    const tenant = pathTenant(request);
    const header = headerTenant(request);
    if (header !== undefined && header !== tenant)
      throw invalidTenant(
        TENANT_HEADER,
        `${TENANT_HEADER} names another tenant than the path; send it without the header`,
      );
    return tenantFor(principal, tenant);
  }
  if (principal.tenant !== undefined)
    throw new TenantForbiddenException(
      `${principalLabel(principal)} acts for tenant '${principal.tenant}', and this route is not per tenant: it is for operators, across tenants (docs/tenants.md)`,
      principal,
    );
  if (request.headers[HEADER_KEY] !== undefined)
    throw new TenantForbiddenException(
      `This route is not per tenant (it is for operators, across tenants): send it without ${TENANT_HEADER} (docs/tenants.md)`,
      principal,
    );
  return undefined;
}
