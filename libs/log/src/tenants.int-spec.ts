import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { take } from '@ordinal/test-support/feed-take';
import { LogWriter } from './writer/log-writer.service.js';
import { LogReader } from './reader/log-reader.service.js';
import { LiveRouter } from './router/live-router.service.js';
import { TenantSessions } from './reader/tenant-sessions.js';
import { InvalidMessageError, VersionConflictError } from './errors/index.js';
import { renderedJson } from './row-mapper.js';
import type { Ordering } from './log-options.js';
import type { AppendResult, StoredMessage } from './message.js';

const start = (db: TestDatabase, ordering: Ordering) =>
  startLogContext(db.url, { ordering, startMarker: false, gapTimeoutMs: 60_000 });

const created = (result: AppendResult): StoredMessage[] =>
  result.entries.map((entry) => {
    if (entry.status === 'duplicate') throw new Error('unexpected duplicate');
    return entry.message;
  });

describe.each<Ordering>(['gapless', 'concurrent'])('tenants in the log (%s mode)', (ordering) => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let writer: LogWriter;
  let reader: LogReader;

  beforeEach(async () => {
    db = await createTestDatabase();
    app = await start(db, ordering);
    writer = app.get(LogWriter);
    reader = app.get(LogReader);
  });
  afterEach(async () => {
    await app.close();
    await db.drop();
  });

  /** Appends one event to `streamId` of `tenant` at `expectedVersion`. */
  const appendTo = (tenant: string | undefined, streamId: string, expectedVersion: number, n = 1) =>
    writer.append({
      tenant,
      stream: { streamId, expectedVersion },
      messages: Array.from({ length: n }, (_, i) => ({
        messageType: 'OrderPlaced',
        body: { tenant: tenant ?? null, i },
      })),
    });

  it('keeps two tenants’ streams of the same id apart: their own versions, conflicts and names', async () => {
    // Given tenants acme and globex each creating order-1 (both expect a new stream)
    const acme = await appendTo('acme', 'order-1', 0, 2);
    const globex = await appendTo('globex', 'order-1', 0, 1);
    // Then each has its own versions, and its messages carry the plain id and the tenant
    expect(created(acme).map((m) => [m.streamId, m.streamVersion, m.tenant])).toEqual([
      ['order-1', 1, 'acme'],
      ['order-1', 2, 'acme'],
    ]);
    expect(created(globex).map((m) => [m.streamId, m.streamVersion, m.tenant])).toEqual([
      ['order-1', 1, 'globex'],
    ]);
    expect(acme.streamVersion).toBe(2);
    expect(globex.streamVersion).toBe(1);
    // And a stale version conflicts in its own tenant only, naming the plain id
    const stale = appendTo('globex', 'order-1', 2);
    await expect(stale).rejects.toBeInstanceOf(VersionConflictError);
    await expect(stale).rejects.toThrow(/'order-1'|order-1/);
    await expect(stale).rejects.not.toThrow(/globex\//);
    await expect(appendTo('acme', 'order-1', 2)).resolves.toMatchObject({ streamVersion: 3 });
    // And a stream of no tenant with the same id is a third stream
    await expect(appendTo(undefined, 'order-1', 0)).resolves.toMatchObject({ streamVersion: 1 });
    // And the table holds the qualified names: category and heads per tenant
    const rows = await db.query<{ stream_id: string; category: string; tenant: string | null }>(
      'SELECT stream_id, category, tenant FROM messages ORDER BY index',
    );
    expect(rows).toEqual([
      { stream_id: 'acme/order-1', category: 'acme/order', tenant: 'acme' },
      { stream_id: 'acme/order-1', category: 'acme/order', tenant: 'acme' },
      { stream_id: 'globex/order-1', category: 'globex/order', tenant: 'globex' },
      { stream_id: 'acme/order-1', category: 'acme/order', tenant: 'acme' },
      { stream_id: 'order-1', category: 'order', tenant: null },
    ]);
    const heads = await db.query<{ stream_id: string; version: string }>(
      'SELECT stream_id, version::text FROM streams ORDER BY stream_id',
    );
    expect(heads).toEqual([
      { stream_id: 'acme/order-1', version: '3' },
      { stream_id: 'globex/order-1', version: '1' },
      { stream_id: 'order-1', version: '1' },
    ]);
  });

  it('takes the same idempotency key from two tenants as two messages, and a resend in one as its repeat', async () => {
    const send = (tenant: string) =>
      writer.append({
        tenant,
        messages: [{ messageType: 'Paid', body: { tenant }, idempotencyKey: 'invoice-7-paid' }],
      });
    const [acme] = created(await send('acme'));
    const [globex] = created(await send('globex'));
    expect(globex.id).not.toBe(acme.id);
    expect([acme.idempotencyKey, globex.idempotencyKey]).toEqual([
      'invoice-7-paid',
      'invoice-7-paid',
    ]);
    // A resend by acme is acme's message again, its key plain
    const again = await send('acme');
    expect(again.entries[0]).toMatchObject({
      status: 'repeat',
      message: { id: acme.id, tenant: 'acme', idempotencyKey: 'invoice-7-paid' },
    });
    const keys = await db.query<{ idempotency_key: string }>(
      'SELECT idempotency_key FROM message_keys ORDER BY idempotency_key',
    );
    expect(keys.map((k) => k.idempotency_key)).toEqual([
      'acme/invoice-7-paid',
      'globex/invoice-7-paid',
    ]);
  });

  it('refuses a tenant id that is not one, and stores nothing', async () => {
    for (const tenant of ['', 'acme/x', 'ac-me', '_acme', 'a'.repeat(64), 'ACME ', 'é'])
      await expect(appendTo(tenant, 'order-1', 0)).rejects.toBeInstanceOf(InvalidMessageError);
    expect(await db.query('SELECT 1 FROM messages')).toHaveLength(0);
  });

  it('reads one tenant’s messages, plain and rendered, with the log’s positions', async () => {
    await appendTo('acme', 'order-1', 0);
    await appendTo('globex', 'order-1', 0);
    await appendTo(undefined, 'order-9', 0);
    await appendTo('acme', 'order-2', 0);
    const head = await reader.safeHead();
    // A page for acme: its two messages at their global indices
    const page = await reader.page(1, 10, { tenant: 'acme' });
    expect(page.map((m) => [m.id, m.streamId, m.tenant])).toEqual([
      [1, 'order-1', 'acme'],
      [4, 'order-2', 'acme'],
    ]);
    // The rendered read (an SSE stream's) shows the plain id and the tenant, never the qualifier
    const rendered = await reader.readUpTo(0, 10, { tenant: 'acme' }, head, true);
    const json = rendered.messages.map((m) => JSON.parse(renderedJson(m)!) as StoredMessage);
    expect(json.map((m) => [m.id, m.streamId, m.tenant])).toEqual([
      [1, 'order-1', 'acme'],
      [4, 'order-2', 'acme'],
    ]);
    expect(rendered.messages.map((m) => [m.streamId, m.tenant])).toEqual([
      ['order-1', 'acme'],
      ['order-2', 'acme'],
    ]);
    expect(rendered.messages.map(renderedJson).join('')).not.toContain('acme/');
    // The whole log still reads every position, each with its tenant or none
    const all = await reader.page(1, 10);
    expect(all.map((m) => m.tenant)).toEqual(['acme', 'globex', null, 'acme']);
    expect(JSON.stringify(all)).not.toContain('/order');
  });

  it('delivers a tenant’s feed from history and live, passing other tenants’ positions over', async () => {
    await appendTo('acme', 'order-1', 0);
    await appendTo('globex', 'order-1', 0);
    const feed = app.get(LiveRouter).open({ fromIndex: 1, tenant: 'acme' });
    try {
      await appendTo('globex', 'order-1', 1);
      await appendTo('acme', 'order-1', 1);
      const got = await take(feed, 2);
      expect(got.map((m) => [m.id, m.tenant, m.streamVersion])).toEqual([
        [1, 'acme', 1],
        [4, 'acme', 2],
      ]);
    } finally {
      feed.close();
    }
  });

  it('puts row-level security behind the queries: a tenant’s session sees its rows only', async () => {
    await appendTo('acme', 'order-1', 0);
    await appendTo('globex', 'order-1', 0);
    await appendTo(undefined, 'order-1', 0);
    // A read for a tenant that forgot its filter still gets only that tenant's rows
    const sessions = app.get(TenantSessions);
    expect(await sessions.hasWall()).toBe(true);
    const forgot = await sessions.read<{ tenant: string | null }>('acme', {
      text: 'SELECT tenant FROM messages ORDER BY index',
      values: [],
    });
    expect(forgot).toEqual([{ tenant: 'acme' }]);
    // Raw SQL as the application role inside a tenant's session
    const asRole = async (tenant: string | null, sql: string) => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL ROLE ordinal_tenant');
        if (tenant !== null)
          await client.query(`SELECT set_config('ordinal.tenant', $1, true)`, [tenant]);
        return (await client.query<{ tenant: string | null }>(sql)).rows;
      } finally {
        await client.end();
      }
    };
    expect(await asRole('globex', 'SELECT tenant FROM messages')).toEqual([{ tenant: 'globex' }]);
    expect(await asRole(null, 'SELECT tenant FROM messages')).toEqual([]);
    // A segment is not a way around the policy
    const [{ name }] = await db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'messages'::regclass ORDER BY c.relname LIMIT 1`,
    );
    await expect(asRole('globex', `SELECT tenant FROM ${name}`)).rejects.toThrow(
      /permission denied/,
    );
    // And the owner (the server) is not subject to it
    expect(await db.query('SELECT tenant FROM messages')).toHaveLength(3);
  });

  it('reads a tenant’s category under its row-level security: a mis-tagged row of another tenant stays out', async () => {
    await appendTo('acme', 'order-1', 0);
    // A row a bug tagged with globex, under acme's names (far above the head: no writer meets it)
    await db.query(
      `INSERT INTO messages (index, message_type, body, content_hash, stream_id, stream_version, category, tenant)
       VALUES (5000, 'Forged', '{}', 'x', 'acme/order-666', 1, 'acme/order', 'globex')`,
    );
    const plain = await reader.pageCategory('acme/order', 1, 10);
    expect(plain.map((m) => m.id)).toEqual([1, 5000]);
    // Read for acme, the wall drops it
    const forAcme = await reader.pageCategory('acme/order', 1, 10, 'acme');
    expect(forAcme.map((m) => [m.id, m.tenant, m.streamId])).toEqual([[1, 'acme', 'order-1']]);
  });
});
