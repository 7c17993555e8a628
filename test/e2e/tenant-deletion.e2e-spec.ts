import { LogWriter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { runCli } from '../support/cli-process.js';

/**
 * Deleting a tenant over HTTP and with the CLI (docs/tenants.md#deleting-a-tenant): the admin
 * route answers what it did and the same again, its positions read as tombstones through the
 * API, its appends are refused (410 tenant_deleted), a bad id is 400 invalid_tenant, a token
 * without admin is refused, and the audit trail records the deletion.
 */
describe('DELETE /api/admin/tenants/:tenant and ordinal tenants delete', () => {
  const READER = { authorization: 'Bearer reader-secret' };
  let db: TestDatabase;
  let server: TestServer;
  let writer: LogWriter;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'reader:reader-secret:read',
      ORDINAL_AUDIT: 'on',
    });
    writer = server.app.get(LogWriter);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  /** Appends for `tenant` in the server's own process (its routes for tenants are apart). */
  const publish = async (tenant: string, secret: string) => {
    const { entries } = await writer.append({
      tenant,
      messages: [{ messageType: 'Placed', body: { secret } }],
    });
    return entries[0].status === 'created' ? entries[0].message.id : -1;
  };

  const page = async () =>
    (await http(server.baseUrl, 'GET', '/api/events?fromIndex=1&limit=1000')).body.messages as {
      id: number;
      messageType: string;
      tenant?: string;
      body?: unknown;
      tombstone?: { reason: string };
    }[];

  it('deletes a tenant (admin): its positions read as deleted tombstones, its appends are refused, a second delete answers the same', async () => {
    const acme = [await publish('acme', 'acme-1'), await publish('acme', 'acme-2')];
    const globex = await publish('globex', 'globex-1');
    const before = await page();
    const head = before[before.length - 1].id;

    const refused = await http(
      server.baseUrl,
      'DELETE',
      '/api/admin/tenants/acme',
      undefined,
      READER,
    );
    expect(refused.status).toBe(403);
    const bad = await http(server.baseUrl, 'DELETE', '/api/admin/tenants/not-a-tenant');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_tenant' });

    const first = await http(
      server.baseUrl,
      'DELETE',
      '/api/admin/tenants/acme?reason=contract%20ended',
      undefined,
      { ...DEV_AUTH, 'user-agent': 'tenant-delete-e2e' },
    );
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      tenant: 'acme',
      reason: 'contract ended',
      throughIndex: expect.any(Number),
      markerIndex: expect.any(Number),
      keysDestroyed: 0,
      scavengedAt: null,
      alreadyDeleted: false,
    });
    expect(first.body.throughIndex).toBeGreaterThanOrEqual(head);
    const again = await http(server.baseUrl, 'DELETE', '/api/admin/tenants/acme');
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, alreadyDeleted: true });

    const after = await page();
    // No position vanished: acme's read as tombstones, the others as they were.
    expect(after.slice(0, before.length).map((m) => m.id)).toEqual(before.map((m) => m.id));
    for (const id of acme)
      expect(after.find((m) => m.id === id)).toMatchObject({
        tenant: 'acme',
        tombstone: { reason: 'deleted' },
      });
    expect(after.find((m) => m.id === globex)).toMatchObject({
      tenant: 'globex',
      body: { secret: 'globex-1' },
    });
    expect(after.find((m) => m.id === first.body.markerIndex)).toMatchObject({
      messageType: '$tenant-deleted',
      body: { tenant: 'acme', throughIndex: first.body.throughIndex },
    });
    await expect(publish('acme', 'acme-3')).rejects.toMatchObject({ code: 'tenant_deleted' });

    // The audit trail (ORDINAL_AUDIT=on) has the admin operation.
    const audit = await waitFor(
      async () => {
        const records = (await page())
          .filter((m) => m.messageType === '$audit.admin')
          .map(
            (m) =>
              m.body as { what: { method: string; route: string }; from: { userAgent?: string } },
          )
          .filter((r) => r.from.userAgent === 'tenant-delete-e2e');
        return records.length > 0 && records;
      },
      10_000,
      'the audit record of the deletion',
    );
    expect(audit[0].what).toMatchObject({ method: 'DELETE', route: '/api/admin/tenants/:tenant' });
  });

  it('ordinal tenants delete deletes, says when it was deleted before, and names a bad id', async () => {
    await publish('initech', 'initech-1');
    const env = { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'dev-ordinal-token' };
    const json = await runCli(['tenants', 'delete', 'initech', '--reason', 'gone', '--json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      tenant: 'initech',
      reason: 'gone',
      alreadyDeleted: false,
    });
    const text = await runCli(['tenants', 'delete', 'initech'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Tenant initech was already deleted');
    const bad = await runCli(['tenants', 'delete', 'a/b'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('400: A tenant id is 1-63 letters');
    const reader = await runCli(['tenants', 'delete', 'initech'], {
      ...env,
      ORDINAL_TOKEN: 'reader-secret',
    });
    expect(reader.code).toBe(5);
  });
});
