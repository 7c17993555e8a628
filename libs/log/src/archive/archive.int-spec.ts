import 'reflect-metadata';
import { mkdtemp, readdir, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { INestApplicationContext } from '@nestjs/common';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { waitFor } from '@ordinal/test-support/test-server';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import { SegmentKeeper } from '../segments/segment-keeper.service.js';
import type { Ordering } from '../log-options.js';
import { renderedJson } from '../row-mapper.js';
import { FilesystemArchiveStore } from './archive-store.js';
import { SegmentArchiver } from './segment-archiver.service.js';
import { LogScavenger } from '../scavenge/log-scavenger.service.js';
import { LogImporter } from '../import/log-importer.service.js';
import { Readable } from 'node:stream';
import { PersonalData } from '../personal/personal-data.service.js';
import { PersonalDataRedactor } from '../personal/personal-data-redactor.service.js';

const SIZE = 1000;
const SPAN = 100;

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
      chunkSpan: SPAN,
    },
  });

/** Every message from index 1 as a reader of `readUpTo` gets it, page by page (SSE's read when `rendered`). */
async function readAll(reader: LogReader, rendered: boolean, types?: string[]): Promise<string[]> {
  const head = await reader.safeHead();
  const out: string[] = [];
  let after = 0;
  while (after < head) {
    const read = await reader.readUpTo(after, 97, { types }, head, rendered, 4096);
    for (const message of read.messages)
      out.push(rendered ? renderedJson(message)! : JSON.stringify(message));
    expect(read.to).toBeGreaterThan(after);
    after = read.to;
  }
  return out;
}

/**
 * Every message a keyed read keeps (every third position, and stream order-1's), page by page
 * (scans of 211 rows, at most 97 kept): as a process running some partitions reads.
 */
async function readKeyedAll(reader: LogReader): Promise<string[]> {
  const head = await reader.safeHead();
  const out: string[] = [];
  for (let after = 0; after < head;) {
    const read = await reader.readKeyedUpTo(
      after,
      97,
      {},
      head,
      (keys) => keys.id % 3 === 0 || keys.streamId === 'order-1',
      211,
    );
    for (const message of read.messages) out.push(JSON.stringify(message));
    expect(read.to).toBeGreaterThan(after);
    after = read.to;
  }
  return out;
}

/** One correlation's messages from index 1, page by page. */
async function correlation(reader: LogReader, id: string): Promise<unknown[]> {
  const head = await reader.safeHead();
  const out: unknown[] = [];
  for (let after = 0; after < head;) {
    const read = await reader.readCorrelation(id, after, 40, {}, head);
    out.push(...read.messages);
    after = read.to;
  }
  return out;
}

/** The rows of [first, end) as PostgreSQL has them. */
const rowsText = (db: TestDatabase, first: number, end: number) =>
  db.query<{ text: string }>(
    `SELECT m::text AS text FROM messages m WHERE index >= $1 AND index < $2 ORDER BY index`,
    [first, end],
  );

/** 2,500 messages: streams across segments, keyed and correlated ones, a few types. */
async function fill(writer: LogWriter): Promise<void> {
  for (let batch = 0; batch < 25; batch++) {
    await writer.append({
      messages: Array.from({ length: 99 }, (_, n) => ({
        messageType: n % 3 === 0 ? 'Shipped' : 'Placed',
        body: { batch, n, text: 'line\nbreak "quoted" \\ tab\t é' },
        idempotencyKey: n % 10 === 0 ? `key-${batch}-${n}` : undefined,
        correlationId: `c-${n % 5}`,
      })),
    });
    await writer.append({
      messages: [{ messageType: 'OrderStep', body: { batch, secret: `order-secret-${batch}` } }],
      stream: { streamId: 'order-1', expectedVersion: batch === 0 ? 'no_stream' : batch },
    });
  }
}

describe.each<Ordering>(['gapless', 'concurrent'])('archived segments (%s mode)', (ordering) => {
  let db: TestDatabase;
  let directory: string;
  let app: INestApplicationContext | null = null;
  let other: INestApplicationContext | null = null;

  beforeEach(async () => {
    db = await createTestDatabase();
    directory = await mkdtemp(join(tmpdir(), 'ordinal-archive-'));
  });
  afterEach(async () => {
    await app?.close();
    await other?.close();
    app = other = null;
    await db.drop();
    await rm(directory, { recursive: true, force: true });
  });

  it('reads archived segments back byte for byte, through every reader, and restores them', async () => {
    app = await start(db, ordering, directory);
    const writer = app.get(LogWriter);
    const reader = app.get(LogReader);
    const archiver = app.get(SegmentArchiver);
    await fill(writer);
    const head = await reader.safeHead();
    expect(head).toBe(2500);

    const before = {
      rendered: await readAll(reader, true),
      plain: await readAll(reader, false),
      typed: await readAll(reader, true, ['OrderStep']),
      keyed: await readKeyedAll(reader),
      one: await reader.get(777),
      category: await reader.pageCategory('order', 1, 1000),
      correlation: await correlation(reader, 'c-3'),
      rows: await rowsText(db, 1, 2001),
    };
    expect(before.rendered).toHaveLength(2500);
    expect(before.category).toHaveLength(25);

    const archived = [await archiver.archive(1), await archiver.archive(1001)];
    expect(archived.map((s) => [s.tier, s.estimatedRows])).toEqual([
      ['archived', 1000],
      ['archived', 1000],
    ]);
    // The segments' tables are gone; their files hold the rows.
    const [{ n }] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class WHERE relname IN ('messages_0000000000000001', 'messages_0000000000001001')`,
    );
    expect(n).toBe(0);
    expect((await readdir(join(directory, 'messages_0000000000000001'))).sort()).toContain(
      'manifest.json',
    );
    const [{ hot }] = await db.query<{ hot: number }>('SELECT count(*)::int AS hot FROM messages');
    expect(hot).toBe(500);

    expect(await readAll(reader, true)).toEqual(before.rendered);
    expect(await readAll(reader, false)).toEqual(before.plain);
    expect(await readAll(reader, true, ['OrderStep'])).toEqual(before.typed);
    expect(before.keyed).toEqual(
      before.plain.filter((m) => {
        const { id, streamId } = JSON.parse(m) as { id: number; streamId: string | null };
        return id % 3 === 0 || streamId === 'order-1';
      }),
    );
    expect(await readKeyedAll(reader)).toEqual(before.keyed);
    expect(await reader.get(777)).toEqual(before.one);
    expect(await reader.pageCategory('order', 1, 1000)).toEqual(before.category);
    expect(await correlation(reader, 'c-3')).toEqual(before.correlation);

    // tiers=hot: a clear refusal where the read reaches an archived segment, the hot part reads.
    await expect(reader.readUpTo(0, 10, { tiers: 'hot' }, head)).rejects.toMatchObject({
      code: 'index_archived',
    });
    expect((await reader.readUpTo(2000, 10, { tiers: 'hot' }, head)).messages[0].id).toBe(2001);

    // The log goes on at the next index.
    const next = await writer.append({ messages: [{ messageType: 'After', body: {} }] });
    expect(next.entries[0].status === 'created' && next.entries[0].message.id).toBe(2501);
    // A resend of an archived message's key is still a repeat of it.
    const resent = await writer.append({
      messages: [
        {
          messageType: 'Shipped',
          body: { batch: 0, n: 0, text: 'line\nbreak "quoted" \\ tab\t é' },
          idempotencyKey: 'key-0-0',
          correlationId: 'c-0',
        },
      ],
    });
    expect(resent.entries[0].status).toBe('repeat');
    expect(resent.entries[0].status === 'repeat' && resent.entries[0].message.id).toBe(1);
    // So is an imported line with it.
    const line = {
      messageType: 'Shipped',
      content: { batch: 0, n: 0, text: 'line\nbreak "quoted" \\ tab\t é' },
      idempotencyKey: 'key-0-0',
      correlationId: 'c-0',
    };
    const imported = await app
      .get(LogImporter)
      .import(Readable.from([JSON.stringify(line) + '\n']));
    expect(imported).toMatchObject({ imported: 0, repeats: 1 });

    // Restored: the same rows, in the table again.
    const restored = await archiver.restore(1);
    expect(restored.tier).toBe('hot');
    expect(await rowsText(db, 1, 1001)).toEqual(before.rows.slice(0, 1000));
    expect((await readAll(reader, true)).slice(0, 2500)).toEqual(before.rendered);
    await expect(archiver.restore(1)).rejects.toMatchObject({ code: 'segment_not_archivable' });
  });

  it('lets a reader whose list of segments is stale read the archived range, not less', async () => {
    app = await start(db, ordering, directory);
    other = await start(db, ordering, directory);
    await fill(app.get(LogWriter));
    const stale = other.get(LogReader);
    const before = await readAll(stale, true);
    await app.get(SegmentArchiver).archive(1);
    // `other` read the list before the archive: its guard finds out.
    expect(await readAll(stale, true)).toEqual(before);
    await app.get(SegmentArchiver).restore(1);
    expect(await readAll(stale, true)).toEqual(before);
  });

  it('refuses to archive what is not sealed, and reports a corrupted file instead of reading it', async () => {
    app = await start(db, ordering, directory);
    await fill(app.get(LogWriter));
    const archiver = app.get(SegmentArchiver);
    await expect(archiver.archive(2001)).rejects.toMatchObject({ code: 'segment_not_archivable' });
    await expect(archiver.archive(4242)).rejects.toMatchObject({ code: 'segment_not_found' });
    await archiver.archive(1);
    expect(await archiver.verify(1)).toMatchObject({ ok: true, rows: 1000 });

    const file = join(directory, 'messages_0000000000000001', '0000000000000301.tsv.gz');
    const bytes = await readFile(file);
    bytes[bytes.length - 12] ^= 0xff;
    await writeFile(file, bytes);
    // A fresh process reads the file (this one may hold the chunk in memory).
    other = await start(db, ordering, directory);
    const fresh = other.get(LogReader);
    const head = await fresh.safeHead();
    expect((await fresh.readUpTo(0, 50, {}, head)).messages).toHaveLength(50);
    await expect(fresh.readUpTo(300, 50, {}, head)).rejects.toMatchObject({
      code: 'archive_corrupt',
    });
    await expect(fresh.get(350)).rejects.toMatchObject({ code: 'archive_corrupt' });
    const report = await other.get(SegmentArchiver).verify(1);
    expect(report.ok).toBe(false);
    expect(report.chunks.filter((c) => !c.ok).map((c) => c.file)).toEqual([
      'messages_0000000000000001/0000000000000301.tsv.gz',
    ]);
    // Restoring from a corrupt archive restores nothing.
    await expect(other.get(SegmentArchiver).restore(1)).rejects.toMatchObject({
      code: 'archive_corrupt',
    });
    expect((await app.get(SegmentKeeper).list())[0].tier).toBe('archived');
  });
});

// The schedule, and rewrites of archived files (a scavenge, a redaction): they do not depend
// on the ordering mode.
describe('archived segments: the schedule, and files written again', () => {
  const ordering: Ordering = 'gapless';
  let db: TestDatabase;
  let directory: string;
  let app: INestApplicationContext | null = null;

  beforeEach(async () => {
    db = await createTestDatabase();
    directory = await mkdtemp(join(tmpdir(), 'ordinal-archive-'));
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    await db.drop();
    await rm(directory, { recursive: true, force: true });
  });

  it('archives every sealed segment older than the archive age on its schedule, and no other', async () => {
    app = await startLogContext(db.url, {
      ordering,
      segmentSize: SIZE,
      maxBatchMessages: 300,
      startMarker: false,
      archive: {
        store: new FilesystemArchiveStore(directory),
        afterMs: 0,
        checkMs: 100,
        chunkSpan: SPAN,
      },
    });
    await fill(app.get(LogWriter));
    const keeper = app.get(SegmentKeeper);
    const tiers = await waitFor(
      async () => {
        const first = (await keeper.list()).slice(0, 3).map((s) => s.tier);
        return first[1] === 'archived' && first;
      },
      30_000,
      'the schedule to archive segment 2',
    );
    // Segments 1 and 2 are sealed; 3 holds the head.
    expect(tiers).toEqual(['archived', 'archived', 'hot']);
    expect(await app.get(LogReader).get(1500)).toMatchObject({ id: 1500 });
  });

  it('lets a scavenge erase what a delete hides in archived segments: the files are written again, the old ones go', async () => {
    app = await start(db, ordering, directory);
    await fill(app.get(LogWriter));
    const reader = app.get(LogReader);
    const archiver = app.get(SegmentArchiver);
    await archiver.archive(1);
    const secretsInArchive = async () => {
      const files = await readdir(join(directory, 'messages_0000000000000001'));
      let found = 0;
      for (const name of files.filter((f) => f.endsWith('.gz'))) {
        const text = gunzipSync(await readFile(join(directory, 'messages_0000000000000001', name)));
        found += text.toString().split('order-secret-').length - 1;
      }
      return { found, files: files.length };
    };
    // 10 of the stream's 25 events are in segment 1 (one per batch of 100).
    expect((await secretsInArchive()).found).toBe(10);
    // The stream deleted through version 20: its hidden events read as tombstones at once...
    await db.query(
      `INSERT INTO stream_states (stream_id, state, deleted_through) VALUES ('order-1', 'deleted', 20)`,
    );
    const hidden = (await reader.pageCategory('order', 1, 100)).filter(
      (m) => m.streamVersion !== null && m.streamVersion <= 10,
    );
    expect(hidden).toHaveLength(10);
    const head = await reader.safeHead();
    const stepsBefore = (await readAll(reader, true, ['OrderStep'])).slice(0, 10);
    expect(stepsBefore.every((json) => json.includes('"reason":"deleted"'))).toBe(true);
    // ...and the scavenge erases them in the archive too.
    const run = await app.get(LogScavenger).run({ vacuum: false });
    expect(run.rowsErased).toBe(20);
    const after = await secretsInArchive();
    expect(after.found).toBe(0);
    expect(after.files).toBe((await app.get(SegmentArchiver).verify(1)).chunks.length + 1);
    expect(await archiver.verify(1)).toMatchObject({ ok: true, rows: 1000 });
    const steps = (await readAll(reader, true, ['OrderStep'])).slice(0, 10);
    expect(steps.every((json) => json.includes('"reason":"scavenged"'))).toBe(true);
    expect(head).toBe(await reader.safeHead());
    // Restored, the rows are the erased ones.
    await archiver.restore(1);
    const [{ n }] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE stream_id = 'order-1' AND erased IS NOT NULL AND index <= 1000`,
    );
    expect(n).toBe(10);
  });

  it('reads a segment archived again after a restore and a scavenge as it is now, not as its files held it before', async () => {
    app = await start(db, ordering, directory);
    await fill(app.get(LogWriter));
    const reader = app.get(LogReader);
    const archiver = app.get(SegmentArchiver);
    await archiver.archive(1);
    // Read once: this process holds the segment's files in memory.
    const steps = async () => (await readAll(reader, true, ['OrderStep'])).slice(0, 10);
    expect((await steps()).every((json) => json.includes('order-secret-'))).toBe(true);
    await archiver.restore(1);
    await db.query(
      `INSERT INTO stream_states (stream_id, state, deleted_through) VALUES ('order-1', 'deleted', 20)`,
    );
    await app.get(LogScavenger).run({ vacuum: false });
    await archiver.archive(1);
    // The same file names, other rows: erased ones, not the ones held before (which would read
    // as deleted, their bodies still there).
    expect((await steps()).every((json) => json.includes('"reason":"scavenged"'))).toBe(true);
  });

  it('lets a redaction seal personal data stored in clear in archived segments: no clear value stays in the files', async () => {
    app = await start(db, ordering, directory);
    const writer = app.get(LogWriter);
    await writer.append({
      messages: Array.from({ length: 30 }, (_, n) => ({
        messageType: 'CustomerRegistered',
        body: { customerId: `c-${n}`, email: `person-${n}@legacy.example` },
      })),
    });
    await fill(writer);
    const archiver = app.get(SegmentArchiver);
    await archiver.archive(1);
    const inClear = async () => {
      let found = 0;
      const folder = join(directory, 'messages_0000000000000001');
      for (const name of (await readdir(folder)).filter((f) => f.endsWith('.gz')))
        found +=
          gunzipSync(await readFile(join(folder, name)))
            .toString()
            .split('@legacy.example').length - 1;
      return found;
    };
    expect(await inClear()).toBe(30);
    await app
      .get(PersonalData)
      .defineRule('CustomerRegistered', { subject: '/customerId', fields: ['/email'] }, 'api');
    const result = await app.get(PersonalDataRedactor).run();
    expect(result).toMatchObject({ rewritten: 30, verification: { clearRows: 0, verified: true } });
    expect(await inClear()).toBe(0);
    expect(await archiver.verify(1)).toMatchObject({ ok: true });
    // Read back through the archive: the rule's replacement, and the sealed field named.
    const first = await app.get(LogReader).get(1);
    expect(first?.body).toEqual({ customerId: 'c-0', email: null });
  });
});
