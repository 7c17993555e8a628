import { HttpException } from '@nestjs/common';
import type { Principal } from './principal.js';
import { requestTenant, type Tenancy, type TenantedRequest } from './tenancy.js';

const principal = (scopes: string[], tenant?: string): Principal =>
  ({ kind: 'token', name: 'p', scopes: new Set(scopes), groups: [], tenant }) as Principal;

const request = (
  header?: string | string[],
  params: Record<string, string> = {},
): TenantedRequest => {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return {
    headers: header === undefined ? {} : { 'ordinal-tenant': values.join(', ') },
    raw: { rawHeaders: values.flatMap((v) => ['Ordinal-Tenant', v]) },
    params,
  };
};

/** The tenant, or the refusal's status and code. */
function outcome(req: TenantedRequest, who: Principal, tenancy?: Tenancy) {
  try {
    return requestTenant(req, who, tenancy) ?? null;
  } catch (error) {
    const body = (error as HttpException).getResponse() as { code: string };
    return [(error as HttpException).getStatus(), body.code];
  }
}

describe('requestTenant', () => {
  const bound = principal(['read'], 'acme');
  const trusted = principal(['read', 'tenants']);
  const untrusted = principal(['read']);

  it("a route per tenant: the principal's own tenant, or one a trusted principal names", () => {
    expect(outcome(request(), bound, 'header')).toBe('acme');
    expect(outcome(request('acme'), bound, 'header')).toBe('acme');
    expect(outcome(request(), trusted, 'header')).toBeNull();
    expect(outcome(request('globex'), trusted, 'header')).toBe('globex');
    expect(outcome(request(), untrusted, 'header')).toBeNull();
  });

  it('never switches: another tenant is 403, a malformed or repeated header 400', () => {
    expect(outcome(request('globex'), bound, 'header')).toEqual([403, 'tenant_forbidden']);
    expect(outcome(request('acme'), untrusted, 'header')).toEqual([403, 'tenant_forbidden']);
    // A bound tenant wins over the tenants scope
    expect(outcome(request('globex'), principal(['tenants'], 'acme'), 'header')).toEqual([
      403,
      'tenant_forbidden',
    ]);
    for (const bad of ['', 'ac-me', 'acme/x', '*', 'a'.repeat(64), ['acme', 'acme']])
      expect(outcome(request(bad), trusted, 'header')).toEqual([400, 'invalid_tenant']);
  });

  it("a route of the path's tenant: the same rules, and a header must agree with the path", () => {
    expect(outcome(request(undefined, { tenant: 'acme' }), bound, 'path')).toBe('acme');
    expect(outcome(request(undefined, { tenant: 'globex' }), trusted, 'path')).toBe('globex');
    expect(outcome(request(undefined, { tenant: 'globex' }), bound, 'path')).toEqual([
      403,
      'tenant_forbidden',
    ]);
    expect(outcome(request(undefined, { tenant: 'ac-me' }), trusted, 'path')).toEqual([
      400,
      'invalid_tenant',
    ]);
    expect(outcome(request('acme', { tenant: 'globex' }), trusted, 'path')).toEqual([
      400,
      'invalid_tenant',
    ]);
  });

  it("an operator's route: refused to a bound principal and to a request naming a tenant", () => {
    expect(outcome(request(), bound)).toEqual([403, 'tenant_forbidden']);
    expect(outcome(request('acme'), trusted)).toEqual([403, 'tenant_forbidden']);
    expect(outcome(request(), trusted)).toBeNull();
  });
});
