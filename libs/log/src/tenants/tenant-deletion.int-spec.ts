import 'reflect-metadata';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { INestApplicationContext } from '@nestjs/common';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { HeldTransaction, sessionsBlockedBy } from '@ordinal/test-support/held-transaction';
import { waitFor } from '@ordinal/test-support/test-server';
import { LOCKS } from '../log.constants.js';
import { tenantLockKey } from '../writer/category-locks.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import type { Ordering } from '../log-options.js';
import type { StoredMessage } from '../message.js';
import { renderedJson } from '../row-mapper.js';
import { FilesystemArchiveStore } from '../archive/archive-store.js';
import { SegmentArchiver } from '../archive/segment-archiver.service.js';
import { LogScavenger } from '../scavenge/log-scavenger.service.js';
import { PersonalData } from '../personal/personal-data.service.js';
import { SubjectErasure } from '../personal/subject-erasure.service.js';
import { TenantDeletion } from './tenant-deletion.service.js';

const SIZE = 1000;

const start = (db: TestDatabase, ordering: Ordering, directory: string) =>
  startLogContext(db.url, {
    ordering,
    segmentSize: SIZE,
    maxBatchMessages: 300,
    startMarker: false,
    gapTimeoutMs: 60_000,
    lateWatchMs: 0,
    archive: {
      store: new FilesystemArchiveStore(directory),
      afterMs: 0,
      checkMs: 0,
      chunkSpan: 100,
    },
  });

/** Every position from index 1 through `head`, page by page (`rendered`: SSE's read). */
async function readAll(
  reader: LogReader,
  rendered: boolean,
  filter: { tenant?: string } = {},
): Promise<StoredMessage[]> {
  const head = await reader.safeHead();
  const out: StoredMessage[] = [];
  for (let after = 0; after < head;) {
    const read = await reader.readUpTo(after, 97, filter, head, rendered, 4096);
    out.push(...read.messages);
    expect(read.to).toBeGreaterThan(after);
    after = read.to;
  }
  return out;
}

/** A rendered message as the API writes it. */
const wire = (m: StoredMessage) => JSON.parse(renderedJson(m)!) as Record<string, unknown>;

const CUSTOMER = { subject: '/customerId', fields: ['/email'] };

/**
 * acme's and globex's messages (the same stream id and subject id in both), and untenanted
 * ones: some in segment 1 (archived by the test), some in segment 2. Returns acme's indices.
 */
async function fill(writer: LogWriter): Promise<{ acme: number[]; archivedAcme: number[] }> {
  const acme: number[] = [];
  const ids = (r: Awaited<ReturnType<LogWriter['append']>>) =>
    r.entries.flatMap((e) => (e.status === 'created' ? [e.message.id] : []));
  for (const tenant of ['acme', 'globex']) {
    const loose = await writer.append({
      tenant,
      messages: [
        { messageType: 'Placed', body: { secret: `${tenant}-secret-1` } },
        { messageType: 'Placed', body: { secret: `${tenant}-secret-2` }, idempotencyKey: 'k-1' },
      ],
    });
    const stream = await writer.append({
      tenant,
      stream: { streamId: 'order-1', expectedVersion: 'no_stream' },
      messages: [
        { messageType: 'OrderStep', body: { secret: `${tenant}-secret-3` } },
        { messageType: 'OrderStep', body: { secret: `${tenant}-secret-4` } },
      ],
    });
    const personal = await writer.append({
      tenant,
      messages: [
        {
          messageType: 'CustomerRegistered',
          body: { customerId: 'c-1', email: `c-1@${tenant}.example` },
        },
      ],
    });
    if (tenant === 'acme') acme.push(...ids(loose), ...ids(stream), ...ids(personal));
  }
  await writer.append({
    messages: [
      { messageType: 'CustomerRegistered', body: { customerId: 'c-1', email: 'c-1@none.example' } },
    ],
  });
  // Untenanted filler past segment 1.
  for (let batch = 0; batch < 4; batch++)
    await writer.append({
      messages: Array.from({ length: 250 }, (_, n) => ({ messageType: 'Filler', body: { n } })),
    });
  const archivedAcme = [...acme];
  // acme in segment 2 too (hot).
  const later = await writer.append({
    tenant: 'acme',
    stream: { streamId: 'order-1', expectedVersion: 2 },
    messages: [{ messageType: 'OrderStep', body: { secret: 'acme-secret-5' } }],
  });
  acme.push(...ids(later));
  await writer.append({ messages: [{ messageType: 'Tail', body: {} }] });
  return { acme, archivedAcme };
}

describe.each<Ordering>(['gapless', 'concurrent'])('deleting a tenant (%s mode)', (ordering) => {
  let db: TestDatabase;
  let directory: string;
  let app: INestApplicationContext | null = null;

  beforeEach(async () => {
    db = await createTestDatabase();
    directory = await mkdtemp(join(tmpdir(), 'ordinal-tenant-delete-'));
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    await db.drop();
    await rm(directory, { recursive: true, force: true });
  });

  it('tombstones every position of the tenant for every reader, refuses its appends, shreds its keys, and lets a scavenge erase its rows', async () => {
    app = await start(db, ordering, directory);
    const writer = app.get(LogWriter);
    const reader = app.get(LogReader);
    const personal = app.get(PersonalData);
    await personal.defineRule('CustomerRegistered', CUSTOMER, 'api');
    const { acme, archivedAcme } = await fill(writer);
    await app.get(SegmentArchiver).archive(1);
    const acmeSet = new Set(acme);

    // The same subject id in two tenants and in none: three subjects, three keys.
    const registered = (await readAll(reader, false)).filter(
      (m) => m.messageType === 'CustomerRegistered',
    );
    const subjects = registered.map((m) => m.personal?.subject);
    expect(new Set(subjects).size).toBe(3);
    expect(subjects[0]).toMatch(/^acme\/[0-9a-f]{64}$/);
    expect(subjects[1]).toMatch(/^globex\/[0-9a-f]{64}$/);
    expect(subjects[2]).toMatch(/^[0-9a-f]{64}$/);
    const clear = async () =>
      (await personal.reveal(registered)).map((m) => (m.body as { email: unknown }).email);
    expect(await clear()).toEqual(['c-1@acme.example', 'c-1@globex.example', 'c-1@none.example']);

    const head = await reader.safeHead();
    const [{ rows: rowsBefore }] = await db.query<{ rows: number }>(
      `SELECT count(*)::int AS rows FROM messages`,
    );
    const before = {
      plain: await readAll(reader, false),
      rendered: (await readAll(reader, true)).map(wire),
    };
    expect(before.plain).toHaveLength(head);

    const deletion = app.get(TenantDeletion);
    const result = await deletion.delete('acme', { by: 'test', reason: 'contract ended' });
    expect(result).toMatchObject({
      tenant: 'acme',
      deletedBy: 'test',
      reason: 'contract ended',
      throughIndex: head,
      markerIndex: head + 1,
      keysDestroyed: 1,
      scavengedAt: null,
      alreadyDeleted: false,
    });

    // Every position is still there: acme's are `deleted` tombstones, keeping their tenant.
    const plain = await readAll(reader, false);
    const rendered = (await readAll(reader, true)).map(wire);
    expect(plain).toHaveLength(head + 1);
    expect(rendered).toHaveLength(head + 1);
    expect(plain.map((m) => m.id)).toEqual(Array.from({ length: head + 1 }, (_, i) => i + 1));
    for (const [i, m] of plain.slice(0, head).entries()) {
      if (acmeSet.has(m.id)) {
        expect(m).toMatchObject({ tombstone: 'deleted', body: null, tenant: 'acme' });
        expect(rendered[i]).toMatchObject({ tombstone: { reason: 'deleted' }, tenant: 'acme' });
        expect(rendered[i].body).toBeUndefined();
      } else {
        expect(m).toEqual(before.plain[i]);
        expect(rendered[i]).toEqual(before.rendered[i]);
      }
    }
    expect(plain[head]).toMatchObject({
      messageType: '$tenant-deleted',
      tenant: null,
      userId: 'system',
      body: { tenant: 'acme', throughIndex: head },
    });
    // Filtered by the tenant, one at a time, by category (the stored one), from the archive too.
    const ofAcme = await readAll(reader, true, { tenant: 'acme' });
    expect(ofAcme.map((m) => m.id)).toEqual(acme);
    expect(ofAcme.every((m) => m.tombstone === 'deleted')).toBe(true);
    expect(await reader.get(archivedAcme[0])).toMatchObject({ tombstone: 'deleted', body: null });
    expect(await reader.get(acme[acme.length - 1])).toMatchObject({ tombstone: 'deleted' });
    const category = await reader.pageCategory('acme/order', 1, 100);
    expect(category.map((m) => [m.streamVersion, m.tombstone])).toEqual([
      [1, 'deleted'],
      [2, 'deleted'],
      [3, 'deleted'],
    ]);
    expect((await reader.pageCategory('globex/order', 1, 100)).map((m) => m.tombstone)).toEqual([
      undefined,
      undefined,
    ]);

    // Appends for the tenant are refused, whatever path they would take; others go on.
    const refused = [
      writer.append({ tenant: 'acme', messages: [{ messageType: 'Placed', body: {} }] }),
      writer.append({
        tenant: 'acme',
        messages: [{ messageType: 'Placed', body: {}, idempotencyKey: 'k-2' }],
      }),
      writer.append({
        tenant: 'acme',
        stream: { streamId: 'order-1', expectedVersion: 3 },
        messages: [{ messageType: 'OrderStep', body: {} }],
      }),
      writer.append({
        tenant: 'acme',
        stream: { streamId: 'order-2', expectedVersion: 'no_stream' },
        messages: [{ messageType: 'OrderStep', body: {} }],
      }),
      writer.append({
        tenant: 'acme',
        messages: [{ messageType: 'CustomerRegistered', body: { customerId: 'c-2', email: 'x' } }],
      }),
    ];
    for (const append of refused)
      await expect(append).rejects.toMatchObject({ code: 'tenant_deleted', tenant: 'acme' });
    await expect(
      writer.append({
        tenant: 'globex',
        stream: { streamId: 'order-1', expectedVersion: 2 },
        messages: [{ messageType: 'OrderStep', body: {} }],
      }),
    ).resolves.toMatchObject({ streamVersion: 3 });
    await expect(
      writer.append({ messages: [{ messageType: 'Placed', body: {} }] }),
    ).resolves.toBeDefined();
    expect(await reader.safeHead()).toBe(head + 3);

    // Its subjects' keys are gone (crypto-shredding, before any scavenge); the same subject
    // id elsewhere reads in clear.
    expect(await clear()).toEqual([null, 'c-1@globex.example', 'c-1@none.example']);
    const [{ destroyed }] = await db.query<{ destroyed: number }>(
      `SELECT count(*)::int AS destroyed FROM ordinal_keys.subject_keys WHERE tenant = 'acme' AND wrapped_key IS NULL`,
    );
    expect(destroyed).toBe(1);

    // Deleting again answers the first deletion; so does a reapply of the ledgers.
    expect(await deletion.delete('acme', { by: 'someone else' })).toEqual({
      ...result,
      alreadyDeleted: true,
    });
    expect(await app.get(SubjectErasure).reapply()).toEqual({ subjects: 0, tenants: 1 });
    await expect(deletion.delete('not/a tenant')).rejects.toMatchObject({
      code: 'invalid_tenant',
    });

    // The scavenge erases acme's rows in the table and in the archive; the positions stay.
    const run = await app.get(LogScavenger).run({ vacuum: false });
    expect(run.rowsErased).toBe(acme.length);
    const raw = await db.query<{ index: string; body: unknown; metadata: unknown; erased: string }>(
      `SELECT index::text, body, metadata, erased FROM messages WHERE tenant = 'acme' ORDER BY index`,
    );
    expect(raw.map((r) => [Number(r.index), r.body, r.metadata, r.erased])).toEqual(
      acme.filter((i) => i > SIZE).map((i) => [i, null, null, 'deleted']),
    );
    const archivedText = async () => {
      let text = '';
      const folder = join(directory, 'messages_0000000000000001');
      for (const name of (await readdir(folder)).filter((f) => f.endsWith('.gz')))
        text += gunzipSync(await readFile(join(folder, name))).toString();
      return text;
    };
    const files = await archivedText();
    expect(files).not.toContain('acme-secret');
    expect(files).toContain('globex-secret-1');
    expect(await app.get(SegmentArchiver).verify(1)).toMatchObject({ ok: true });
    const [{ rows: rowsAfter }] = await db.query<{ rows: number }>(
      `SELECT count(*)::int AS rows FROM messages`,
    );
    expect(rowsAfter).toBe(rowsBefore + 3);
    const afterScavenge = await readAll(reader, false);
    expect(afterScavenge.map((m) => m.id)).toEqual(
      Array.from({ length: head + 3 }, (_, i) => i + 1),
    );
    expect(afterScavenge.filter((m) => acmeSet.has(m.id)).map((m) => m.tombstone)).toEqual(
      acme.map(() => 'deleted'),
    );
    expect((await deletion.deletion('acme'))?.scavengedAt).not.toBeNull();
    // A second scavenge has nothing left of the tenant to erase.
    expect((await app.get(LogScavenger).run({ vacuum: false })).rowsErased).toBe(0);

    // A tenant's subject is erased as that tenant's: the same id elsewhere keeps its key.
    const erased = await app.get(SubjectErasure).erase('c-1', 'art. 17', { tenant: 'globex' });
    expect(erased.subjectHash).toMatch(/^globex\/[0-9a-f]{64}$/);
    expect(await clear()).toEqual([null, null, 'c-1@none.example']);
  });

  /** The lock a flush of the tenant's messages takes (gapless: the log's; concurrent: the tenant's, shared). */
  const flushLock = (held: HeldTransaction) =>
    ordering === 'gapless'
      ? held.lockLog()
      : held.query('SELECT pg_advisory_xact_lock_shared($1::bigint)', [
          String(tenantLockKey('acme')),
        ]);
  const blocked = async (held: HeldTransaction, what: string) => {
    const pid = await held.pid();
    await waitFor(
      async () => (await sessionsBlockedBy((t, v) => db.query(t, v), pid)) > 0,
      10_000,
      what,
    );
  };

  it('waits for a flush of the tenant in flight; a flush waiting on the deletion is refused once it commits', async () => {
    app = await start(db, ordering, directory);
    const writer = app.get(LogWriter);
    await writer.append({ tenant: 'acme', messages: [{ messageType: 'Placed', body: {} }] });

    // A flush holds its lock: the deletion waits for it.
    const flush = await HeldTransaction.begin(db.url);
    await flushLock(flush);
    const deleting = app.get(TenantDeletion).delete('acme');
    await blocked(flush, 'the deletion to wait for the flush');
    expect(await db.query(`SELECT tenant FROM deleted_tenants`)).toEqual([]);
    await flush.commit();
    expect(await deleting).toMatchObject({ tenant: 'acme', alreadyDeleted: false });

    // A deletion holds its lock (globex's, by hand): a flush of the tenant waits, then fails.
    const deletion = await HeldTransaction.begin(db.url);
    await deletion.query('SELECT pg_advisory_xact_lock($1::bigint)', [
      ordering === 'gapless' ? LOCKS.log : String(tenantLockKey('globex')),
    ]);
    // Settled to a value at once: it fails while the test still awaits the commit.
    const appending = writer
      .append({ tenant: 'globex', messages: [{ messageType: 'Placed', body: {} }] })
      .then(
        () => null,
        (error: unknown) => error,
      );
    await blocked(deletion, 'the flush to wait for the deletion');
    await deletion.query(
      `INSERT INTO deleted_tenants (tenant, deleted_by, through_index) VALUES ('globex', 'test', 0)`,
    );
    await deletion.commit();
    expect(await appending).toMatchObject({ code: 'tenant_deleted', tenant: 'globex' });
  });
});
