import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import {
  FilesystemArchiveStore,
  InvalidMessageError,
  LogWriter,
  SegmentArchiver,
  StreamDeletedError,
  TenantSessions,
  VersionConflictError,
} from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startEventStoreContext } from '@ordinal/test-support/event-store-context';
import { StreamStore } from './stream-store.service.js';
import { StreamMetadataStore } from './stream-metadata.service.js';

const event = (value: number) => ({ eventType: 'Counted', data: { value } });
const events = (...values: number[]) => values.map(event);

// Both orderings: each has its own append path for a stream with an expected version, and a
// tenant's stream id is qualified before either takes it.
describe.each(['gapless', 'concurrent'] as const)(
  'StreamStore.forTenant: two tenants with the same stream id (docs/tenants.md), %s mode',
  (ordering) => {
    let db: TestDatabase;
    let app: INestApplicationContext;
    let store: StreamStore;
    let acme: StreamStore;
    let globex: StreamStore;
    let metadata: StreamMetadataStore;

    beforeAll(async () => {
      db = await createTestDatabase();
      // Pages of two events: a read of three goes through the paging path too.
      app = await startEventStoreContext(db.url, {
        log: { ordering },
        eventSourcing: { readPageSize: 2 },
      });
      store = app.get(StreamStore);
      acme = store.forTenant('acme');
      globex = store.forTenant('globex');
      metadata = app.get(StreamMetadataStore);
    });
    afterAll(async () => {
      await app?.close();
      await db?.drop();
    });

    const values = (read: { events: { data: unknown }[] }) =>
      read.events.map((e) => (e.data as { value: number }).value);

    it('is a view of the store: forTenant(undefined) is the store, a bad tenant id is refused', () => {
      expect(store.forTenant(undefined)).toBe(store);
      expect(store.forTenant(null)).toBe(store);
      expect(acme.forTenant(undefined)).toBe(store);
      expect(acme.tenant).toBe('acme');
      expect(acme.forTenant('globex').tenant).toBe('globex');
      expect(store.tenant).toBeNull();
      expect(() => store.forTenant('ac-me')).toThrow(InvalidMessageError);
      expect(() => store.forTenant('acme/x')).toThrow(InvalidMessageError);
    });

    it('keeps independent versions and events, and the raw rows show the qualified ids and the tenant', async () => {
      // Given acme's order-1 with two events and globex's order-1 with one
      const a = await acme.append('order-1', 'no_stream', events(1, 2));
      const g = await globex.append('order-1', 'no_stream', events(10));
      // Then each has its own version, and results name the plain id and the tenant
      expect(a).toMatchObject({ streamId: 'order-1', tenant: 'acme', version: 2 });
      expect(g).toMatchObject({ streamId: 'order-1', tenant: 'globex', version: 1 });
      expect(a.messages.map((m) => [m.streamId, m.tenant, m.streamVersion])).toEqual([
        ['order-1', 'acme', 1],
        ['order-1', 'acme', 2],
      ]);
      expect(await acme.version('order-1')).toBe(2);
      expect(await globex.version('order-1')).toBe(1);
      // And the store of no tenant has no order-1 at all
      expect(await store.version('order-1')).toBe(0);
      const [readA, readG] = await Promise.all([
        acme.readStream('order-1'),
        globex.readStream('order-1'),
      ]);
      expect(readA).toMatchObject({ streamId: 'order-1', tenant: 'acme', version: 2 });
      expect(values(readA)).toEqual([1, 2]);
      expect(readG).toMatchObject({ streamId: 'order-1', tenant: 'globex', version: 1 });
      expect(values(readG)).toEqual([10]);
      expect(await globex.status('order-1')).toEqual({
        streamId: 'order-1',
        tenant: 'globex',
        version: 1,
        state: 'live',
        deletedThrough: 0,
      });
      // And the table holds them qualified, with the tenant column
      const rows = await db.query<{ stream_id: string; category: string; tenant: string }>(
        `SELECT stream_id, category, tenant FROM messages WHERE stream_id LIKE '%order-1' ORDER BY index`,
      );
      expect(rows).toEqual([
        { stream_id: 'acme/order-1', category: 'acme/order', tenant: 'acme' },
        { stream_id: 'acme/order-1', category: 'acme/order', tenant: 'acme' },
        { stream_id: 'globex/order-1', category: 'globex/order', tenant: 'globex' },
      ]);
      const heads = await db.query<{ stream_id: string; version: string }>(
        `SELECT stream_id, version::text FROM streams WHERE stream_id LIKE '%order-1' ORDER BY stream_id`,
      );
      expect(heads).toEqual([
        { stream_id: 'acme/order-1', version: '2' },
        { stream_id: 'globex/order-1', version: '1' },
      ]);
    });

    it('checks expected versions per tenant; a conflict names the plain stream id', async () => {
      // Given acme's order-2 at version 2 and globex's at version 1
      await acme.append('order-2', 'no_stream', events(1, 2));
      await globex.append('order-2', 'no_stream', events(1));
      // When both append expecting version 1
      const [a, g] = await Promise.allSettled([
        acme.append('order-2', 1, events(3)),
        globex.append('order-2', 1, events(2)),
      ]);
      // Then only acme's conflicts, and its error names order-2 as acme knows it
      expect(g).toMatchObject({ status: 'fulfilled', value: { version: 2 } });
      expect(a.status).toBe('rejected');
      const error = (a as PromiseRejectedResult).reason as VersionConflictError;
      expect(error).toBeInstanceOf(VersionConflictError);
      expect(error.streamId).toBe('order-2');
      expect(error.message).not.toContain('acme/');
      // And 'no_stream' on a stream another tenant has is no conflict
      await expect(store.append('order-2', 'no_stream', events(7))).resolves.toMatchObject({
        tenant: null,
        version: 1,
      });
    });

    it('keeps snapshots per tenant and reads them behind the row-level security wall', async () => {
      // Given both tenants' order-3 with three events, and a snapshot of acme's at version 2
      await acme.append('order-3', 'no_stream', events(1, 2, 3));
      await globex.append('order-3', 'no_stream', events(4, 5, 6));
      await acme.saveSnapshot('order-3', 2, { sum: 3 });
      // Then acme's reads use it, globex's have none
      expect(await acme.readSnapshot('order-3')).toMatchObject({ version: 2, state: { sum: 3 } });
      expect(await globex.readSnapshot('order-3')).toBeNull();
      const readA = await acme.readStream('order-3');
      expect(readA.snapshot).toMatchObject({ version: 2, state: { sum: 3 }, schemaVersion: 1 });
      expect(values(readA)).toEqual([3]);
      const slice = await acme.slice('order-3', 1, true);
      expect(slice).toMatchObject({ version: 3, snapshot: { version: 2, state: { sum: 3 } } });
      expect(slice.events.map((e) => e.version)).toEqual([3]);
      const readG = await globex.readStream('order-3');
      expect(readG.snapshot).toBeNull();
      expect(values(readG)).toEqual([4, 5, 6]);
      // And a read without snapshots replays acme's events only
      expect(values(await acme.readStream('order-3', { snapshot: false }))).toEqual([1, 2, 3]);
      // A snapshot from a later version than asked is not used below it
      expect((await acme.readStream('order-3', { fromVersion: 3 })).snapshot).toBeNull();
      const [row] = await db.query<{ stream_id: string }>(
        `SELECT stream_id FROM snapshots WHERE stream_id LIKE '%order-3'`,
      );
      expect(row.stream_id).toBe('acme/order-3');
    });

    it("drops another tenant's row even when the query's filter would take it (the second wall)", async () => {
      // Given the database user can take the tenant role (the test server's superuser can)
      expect(await app.get(TenantSessions).hasWall()).toBe(true);
      // And acme's order-9 with two events, the second forged to belong to globex
      await acme.append('order-9', 'no_stream', events(1, 2));
      await db.query(
        `UPDATE messages SET tenant = 'globex' WHERE stream_id = 'acme/order-9' AND stream_version = 2`,
      );
      // When acme reads the stream, whose query selects both rows by their stored id
      const read = await acme.readStream('order-9');
      // Then row-level security leaves the forged one out (the store of no tenant sees no wall)
      expect(read.version).toBe(2);
      expect(values(read)).toEqual([1]);
    });

    it('soft-deletes one tenant’s stream and leaves the other’s', async () => {
      // Given both tenants' order-4 with two events, and a snapshot of each
      for (const tenant of [acme, globex]) {
        await tenant.append('order-4', 'no_stream', events(1, 2));
        await tenant.saveSnapshot('order-4', 2, { sum: 3 });
      }
      // When acme's is deleted
      const deleted = await acme.delete('order-4');
      expect(deleted).toMatchObject({ streamId: 'order-4', tenant: 'acme', mode: 'soft' });
      expect(deleted.lastVersion).toBe(2);
      // Then acme's reads say deleted, naming order-4 as acme knows it
      const error = await acme.readStream('order-4').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StreamDeletedError);
      expect((error as Error).message).toContain('order-4');
      expect((error as Error).message).not.toContain('acme/');
      expect(await acme.status('order-4')).toMatchObject({ state: 'deleted', version: 2 });
      // And globex's is as it was, snapshot included
      const readG = await globex.readStream('order-4');
      expect(readG.snapshot).toMatchObject({ version: 2 });
      expect(await globex.status('order-4')).toMatchObject({ state: 'live', version: 2 });
      const snapshots = await db.query<{ stream_id: string }>(
        `SELECT stream_id FROM snapshots WHERE stream_id LIKE '%order-4'`,
      );
      expect(snapshots).toEqual([{ stream_id: 'globex/order-4' }]);
      // And the marker (outside the stream) is acme's, with the plain id in its body
      const markers = await db.query<{ stream_id: string | null; tenant: string; body: unknown }>(
        `SELECT stream_id, tenant, body FROM messages WHERE message_type = '$stream-deleted'`,
      );
      expect(markers).toEqual([
        {
          stream_id: null,
          tenant: 'acme',
          body: { streamId: 'order-4', mode: 'soft', lastVersion: 2 },
        },
      ]);
      // And acme's re-created stream goes on after its deleted versions
      expect(await acme.append('order-4', 'no_stream', events(9))).toMatchObject({ version: 3 });
      expect(values(await acme.readStream('order-4'))).toEqual([9]);
    });

    it("applies a tenant's stream and category metadata to its own streams only", async () => {
      // Given three events in order-5 and note-5 of acme, globex and no tenant
      for (const s of [acme, globex, store]) {
        await s.append('order-5', 'no_stream', events(1, 2, 3));
        await s.append('note-5', 'no_stream', events(1, 2, 3));
      }
      // When acme keeps one event of its order-5, and one of every stream of its category note
      const set = await metadata.forTenant('acme').set('order-5', { maxCount: 1 });
      expect(set).toEqual({ streamId: 'order-5', tenant: 'acme', metadataVersion: 1, maxCount: 1 });
      await metadata.forTenant('acme').set('note-*', { maxCount: 1 });
      // Then acme's reads hide the older events
      const readA = await acme.readStream('order-5');
      expect(values(readA)).toEqual([3]);
      expect(readA.hidden).toEqual({ beforeVersion: 3, reason: 'truncated' });
      expect(values(await acme.readStream('note-5'))).toEqual([3]);
      // And globex's and no tenant's streams of the same ids show every event
      for (const s of [globex, store]) {
        expect(values(await s.readStream('order-5'))).toEqual([1, 2, 3]);
        expect(values(await s.readStream('note-5'))).toEqual([1, 2, 3]);
      }
      // And each tenant reads its own metadata
      expect(await metadata.forTenant('acme').get('order-5')).toMatchObject({ maxCount: 1 });
      expect(await metadata.forTenant('globex').get('order-5')).toEqual({
        streamId: 'order-5',
        tenant: 'globex',
        metadataVersion: 0,
      });
      expect(await metadata.get('note-*')).toEqual({ streamId: 'note-*', metadataVersion: 0 });
      expect(metadata.forTenant(undefined)).toBe(metadata);
      // And the tables hold them under the qualified id and category
      const states = await db.query<{ stream_id: string; max_count: string }>(
        `SELECT stream_id, max_count::text FROM stream_states WHERE max_count IS NOT NULL`,
      );
      expect(states).toEqual([{ stream_id: 'acme/order-5', max_count: '1' }]);
      const rules = await db.query<{ category: string }>(`SELECT category FROM category_rules`);
      expect(rules).toEqual([{ category: 'acme/note' }]);
    });

    it("lists a tenant's streams by their plain ids; the store of no tenant lists all, with their tenant", async () => {
      // Given streams list-a..list-c of acme, list-b of globex and list-z of no tenant
      for (const id of ['list-a', 'list-b', 'list-c'])
        await acme.append(id, 'no_stream', events(1));
      await globex.append('list-b', 'no_stream', events(1, 2));
      await store.append('list-z', 'no_stream', events(1));
      // Then acme's list has its three, plain, page by page
      const ids = (list: { streamId: string }[]) => list.map((s) => s.streamId);
      const first = await acme.list({ prefix: 'list-', limit: 2 });
      expect(first.map((s) => [s.streamId, s.tenant, s.version])).toEqual([
        ['list-a', 'acme', 1],
        ['list-b', 'acme', 1],
      ]);
      expect(ids(await acme.list({ prefix: 'list-', after: 'list-b' }))).toEqual(['list-c']);
      expect(ids(await globex.list({ prefix: 'list-' }))).toEqual(['list-b']);
      expect((await globex.list({ prefix: 'list-' }))[0]).toMatchObject({ version: 2 });
      // And a category filter takes the plain category
      expect(ids(await globex.list({ categories: ['list'] }))).toEqual(['list-b']);
      expect(await globex.list({ exceptCategories: ['list', 'order', 'note'] })).toEqual([]);
      // And the store of no tenant lists every one, with its tenant
      const all = await store.list({ categories: ['list'] });
      expect(all.map((s) => [s.tenant, s.streamId])).toEqual([
        ['acme', 'list-a'],
        ['acme', 'list-b'],
        ['acme', 'list-c'],
        ['globex', 'list-b'],
        [null, 'list-z'],
      ]);
      expect(ids(await store.list({ prefix: 'acme/list-', after: 'acme/list-a' }))).toEqual([
        'list-b',
        'list-c',
      ]);
    });

    it('stores the same idempotency key from two tenants as two messages', async () => {
      // Given the same key sent by acme, globex and no tenant
      const writer = app.get(LogWriter);
      const send = (tenant?: string) =>
        writer.append({
          ...(tenant && { tenant }),
          messages: [{ messageType: 'Paid', body: { tenant }, idempotencyKey: 'pay-1' }],
        });
      const [a, g, n] = [await send('acme'), await send('globex'), await send()];
      // Then each stored its own message
      expect([a, g, n].map((r) => r.entries[0].status)).toEqual(['created', 'created', 'created']);
      // And acme's second try is its repeat, not a new message
      const again = await send('acme');
      expect(again.entries[0]).toMatchObject({ status: 'repeat' });
      expect(again.entries[0].status === 'repeat' && again.entries[0].message).toMatchObject({
        idempotencyKey: 'pay-1',
        tenant: 'acme',
      });
      const rows = await db.query<{ idempotency_key: string; tenant: string | null }>(
        `SELECT idempotency_key, tenant FROM messages WHERE message_type = 'Paid' ORDER BY index`,
      );
      expect(rows).toEqual([
        { idempotency_key: 'acme/pay-1', tenant: 'acme' },
        { idempotency_key: 'globex/pay-1', tenant: 'globex' },
        { idempotency_key: 'pay-1', tenant: null },
      ]);
    });
  },
);

describe.each(['gapless', 'concurrent'] as const)(
  "StreamStore.forTenant: a tenant's stream in an archived segment, %s mode",
  (ordering) => {
    let db: TestDatabase;
    let directory: string;
    let app: INestApplicationContext;

    beforeAll(async () => {
      db = await createTestDatabase();
      directory = await mkdtemp(join(tmpdir(), 'ordinal-tenant-archive-'));
      app = await startEventStoreContext(db.url, {
        log: {
          ordering,
          segmentSize: 1000,
          lateWatchMs: 0,
          archive: {
            store: new FilesystemArchiveStore(directory),
            afterMs: 0,
            checkMs: 0,
            chunkSpan: 100,
          },
        },
        eventSourcing: { readPageSize: 2 },
      });
    });
    afterAll(async () => {
      await app?.close();
      await db?.drop();
      await rm(directory, { recursive: true, force: true });
    });

    it('reads the archived and the hot events of its own stream, not those of the same id of another tenant', async () => {
      // Given order-1 of acme, globex and no tenant, and a snapshot of acme's, in segment 1
      const store = app.get(StreamStore);
      const [acme, globex] = [store.forTenant('acme'), store.forTenant('globex')];
      await acme.append('order-1', 'no_stream', events(1, 2, 3));
      await globex.append('order-1', 'no_stream', events(10, 11, 12));
      await store.append('order-1', 'no_stream', events(20));
      await acme.saveSnapshot('order-1', 2, { sum: 3 });
      // And enough other messages to seal the segment, and one more event of acme's after it
      const writer = app.get(LogWriter);
      for (let batch = 0; batch < 10; batch++)
        await writer.append({
          messages: Array.from({ length: 100 }, (_, n) => ({ messageType: 'Filler', body: { n } })),
        });
      await acme.append('order-1', 3, events(4));
      // When segment 1 is archived
      await app.get(SegmentArchiver).archive(1);
      const chunks = await db.query<{ stream_id: string }>(
        `SELECT DISTINCT stream_id FROM archived_stream_chunks ORDER BY stream_id`,
      );
      expect(chunks.map((c) => c.stream_id)).toEqual(['acme/order-1', 'globex/order-1', 'order-1']);
      // Then each reads its own events, across the tiers
      const values = (read: { events: { data: unknown }[] }) =>
        read.events.map((e) => (e.data as { value: number }).value);
      const readA = await acme.readStream('order-1', { snapshot: false });
      expect(readA).toMatchObject({ tenant: 'acme', version: 4 });
      expect(values(readA)).toEqual([1, 2, 3, 4]);
      expect(values(await globex.readStream('order-1'))).toEqual([10, 11, 12]);
      expect(values(await store.readStream('order-1'))).toEqual([20]);
      // And acme's snapshot read starts after it
      const fromSnapshot = await acme.readStream('order-1');
      expect(fromSnapshot.snapshot).toMatchObject({ version: 2, state: { sum: 3 } });
      expect(values(fromSnapshot)).toEqual([3, 4]);
    });
  },
);
