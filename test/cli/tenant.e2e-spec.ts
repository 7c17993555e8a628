import { parseTokens } from '../../apps/eventstore/src/auth/api-token.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import { runCli, spawnCli } from '../support/cli-process.js';

const ops = { authorization: 'Bearer ops-secret' };

describe('the ordinal command acting for a tenant (--tenant, ORDINAL_TENANT)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: [
        'backend:backend-secret:read+write+tenants',
        'acme:acme-secret:read+write:acme',
        'ops:ops-secret:read+write+admin',
      ].join(';'),
    });
    env = { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'backend-secret' };
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const tenantOf = async (index: number) =>
    (await http(server.baseUrl, 'GET', `/api/events/${index}`, undefined, ops)).body.tenant as
      string | undefined;

  it('publishes for the tenant named by --tenant or ORDINAL_TENANT, before or after the command', async () => {
    const [flag, before, variable, none] = await Promise.all([
      runCli(['publish', 'CliTenant', '{"n":1}', '--tenant', 'acme'], env),
      runCli(['--tenant=globex', 'publish', 'CliTenant', '{"n":2}'], env),
      runCli(['publish', 'CliTenant', '{"n":3}'], { ...env, ORDINAL_TENANT: 'acme' }),
      runCli(['publish', 'CliTenant', '{"n":4}'], env),
    ]);
    for (const r of [flag, before, variable, none]) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(await tenantOf(Number(flag.stdout.trim()))).toBe('acme');
    expect(await tenantOf(Number(before.stdout.trim()))).toBe('globex');
    expect(await tenantOf(Number(variable.stdout.trim()))).toBe('acme');
    expect(await tenantOf(Number(none.stdout.trim()))).toBeUndefined();
  });

  it("tails the tenant's messages only", async () => {
    const from = (await http(server.baseUrl, 'GET', '/api/events/head', undefined, ops)).body
      .head as number;
    const tail = spawnCli(
      [
        'tail',
        '--from',
        String(from + 1),
        '--until',
        String(from + 3),
        '--json',
        '--tenant',
        'acme',
      ],
      env,
    );
    try {
      for (const [tenant, n] of [
        ['acme', 1],
        ['globex', 2],
        ['acme', 3],
      ] as const) {
        const res = await http(
          server.baseUrl,
          'PUT',
          '/api/events/message',
          { messageType: 'CliTailed', content: { n } },
          { authorization: 'Bearer backend-secret', 'ordinal-tenant': tenant },
        );
        expect(res.status).toBe(201);
      }
      expect(await tail.exited).toBe(0);
      const lines = tail
        .stdout()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: number; tenant?: string; body: { n: number } });
      expect(lines.map((l) => [l.id, l.tenant, l.body.n])).toEqual([
        [from + 1, 'acme', 1],
        [from + 3, 'acme', 3],
      ]);
    } finally {
      tail.child.kill();
    }
  });

  it('explains a refused tenant (exit 5), a malformed one (exit 1), and refuses operators commands for a tenant', async () => {
    const [other, malformed, status] = await Promise.all([
      runCli(['publish', 'X', '{}', '--tenant', 'globex'], {
        ...env,
        ORDINAL_TOKEN: 'acme-secret',
      }),
      runCli(['publish', 'X', '{}', '--tenant', 'ac/me'], env),
      runCli(['segments', 'list'], { ...env, ORDINAL_TOKEN: 'ops-secret', ORDINAL_TENANT: 'acme' }),
    ]);
    expect(other.code).toBe(5);
    expect(other.stderr).toContain('may not act for this tenant');
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('Ordinal-Tenant must be a tenant id');
    expect(status.code).toBe(5);
    expect(status.stderr).toContain('(403: ');
  });

  it('token --tenant prints an entry bound to the tenant, as the server reads it; refuses it with the tenants scope or a malformed tenant', async () => {
    const [bound, both, bad] = await Promise.all([
      runCli(['token', '--name', 'acme-app', '--scopes', 'read+write', '--tenant', 'acme']),
      runCli(['token', '--scopes', 'read+tenants', '--tenant', 'acme']),
      runCli(['token', '--tenant', 'ac-me']),
    ]);
    expect(bound.code).toBe(0);
    const [token] = parseTokens(bound.stdout.trim());
    expect(token).toMatchObject({ name: 'acme-app', tenant: 'acme' });
    expect(both.code).toBe(2);
    expect(bad.code).toBe(2);
  });
});
