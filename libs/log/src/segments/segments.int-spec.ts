import 'reflect-metadata';
import { Readable } from 'node:stream';
import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OWNERSHIP_MIGRATIONS } from '@ordinal/ownership';
import { runMigrations } from '@ordinal/pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogImporter } from '../import/log-importer.service.js';
import { LOG_MIGRATIONS } from '../migrations/index.js';
import { Segments1766100000000 } from '../migrations/1766100000000-segments.js';
import { readRenderedPage } from '../sql/read-page.sql.js';
import { SegmentKeeper } from './segment-keeper.service.js';
import type { Ordering, ResolvedLogOptions } from '../log-options.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';

const SIZE = 1000;

const start = (db: TestDatabase, ordering: Ordering, segmentSize = SIZE, maxBatchMessages = 300) =>
  startLogContext(db.url, {
    ordering,
    segmentSize,
    maxBatchMessages,
    startMarker: false,
    gapTimeoutMs: 60_000,
  });

/** The partitions of messages, as PostgreSQL has them (not as log_segments says). */
const partitions = (db: TestDatabase) =>
  db.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'messages'::regclass ORDER BY c.relname`,
  );

/**
 * Every row of the log as text (each row hashed, in index order): what "byte-identical" compares.
 * `columns`: only these (a log's columns before a later migration added more), else the whole row.
 */
const fingerprint = async (db: TestDatabase, columns?: string[]) =>
  (
    await db.query<{ md5: string; n: number }>(
      `SELECT md5(string_agg(md5(${columns ? `ROW(${columns.map((c) => `m.${c}`).join(', ')})` : 'm'}::text), '' ORDER BY index)) AS md5, count(*)::int AS n FROM messages m`,
    )
  )[0];

/** The messages table's columns, in order. */
const columnsOf = async (db: TestDatabase) =>
  (
    await db.query<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute
       WHERE attrelid = 'messages'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
    )
  ).map((c) => c.name);

describe.each<Ordering>(['gapless', 'concurrent'])('segments (%s mode)', (ordering) => {
  let db: TestDatabase;
  let app: INestApplicationContext | null = null;

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    await db.drop();
  });

  it('lays an empty log out at the configured size and adds segments ahead of the head as it grows', async () => {
    app = await start(db, ordering);
    const writer = app.get(LogWriter);
    const keeper = app.get(SegmentKeeper);
    const before = await keeper.list();
    expect(before[0]).toMatchObject({ firstIndex: 1, lastIndex: SIZE, tier: 'hot' });
    for (let i = 0; i < 30; i++)
      await writer.append({
        messages: Array.from({ length: 100 }, (_, n) => ({ messageType: 'Grown', body: { i, n } })),
      });
    // Noted after the flush that reached the last segments, added in the background.
    const segments = await waitForSegments(keeper, (list) =>
      list.some((s) => s.firstIndex <= 3000 + SIZE && s.lastIndex >= 3000 + SIZE),
    );
    expect(segments.map((s) => s.firstIndex)).toEqual(
      segments.map((_, k) => k * SIZE + 1), // contiguous, aligned, oldest first
    );
    expect(await partitions(db)).toHaveLength(segments.length);
    const [{ n, first, last }] = await db.query<{ n: number; first: string; last: string }>(
      'SELECT count(*)::int AS n, min(index)::text AS first, max(index)::text AS last FROM messages',
    );
    // Gapless: 1..3000. Concurrent: the positions a flush drew before it found no segment
    // covering its first row (the keeper behind the head, on a loaded machine) are holes, and
    // its retry draws new ones: every message is there once, the last perhaps above 3000.
    expect({ n, first }).toEqual({ n: 3000, first: '1' });
    if (ordering === 'gapless') expect(last).toBe('3000');
    else expect(Number(last)).toBeGreaterThanOrEqual(3000);
    // Each row is in the segment of its index.
    const misplaced = await db.query(
      `SELECT 1 FROM messages m JOIN pg_class c ON c.oid = m.tableoid JOIN log_segments s ON s.table_name = c.relname
        WHERE m.index < s.first_index OR m.index >= s.end_index`,
    );
    expect(misplaced).toEqual([]);
  });

  it('keeps an idempotency key and a stream version unique across segments', async () => {
    app = await start(db, ordering);
    const writer = app.get(LogWriter);
    const first = await writer.append({
      messages: [{ messageType: 'Keyed', body: { n: 1 }, idempotencyKey: 'key-1' }],
    });
    await writer.append({
      messages: [{ messageType: 'Opened', body: {} }],
      stream: { streamId: 'order-1', expectedVersion: 'no_stream' },
    });
    for (let i = 0; i < 12; i++)
      await writer.append({
        messages: Array.from({ length: 200 }, (_, n) => ({
          messageType: 'Filler',
          body: { i, n },
        })),
      });
    // The key's message is two segments back: the resend still finds it.
    const resent = await writer.append({
      messages: [{ messageType: 'Keyed', body: { n: 1 }, idempotencyKey: 'key-1' }],
    });
    expect(resent.entries[0]).toMatchObject({ status: 'repeat' });
    expect(resent.entries[0].status === 'repeat' && resent.entries[0].message.id).toBe(
      first.entries[0].status === 'created' && first.entries[0].message.id,
    );
    // A second row with the key, by hand, in another segment: refused by message_keys.
    await expect(
      db.query(
        `INSERT INTO messages (index, message_type, body, content_hash, idempotency_key)
         VALUES ((SELECT max(index) + 1 FROM messages), 'Keyed', '{}', 'x', 'key-1')`,
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'messages_idempotency_key_uq' });
    // A stream head moves only from the version its append was planned on.
    await expect(
      db.query(
        `SELECT ordinal_move_stream_heads(ARRAY['order-1'], ARRAY[2]::bigint[], ARRAY[0]::bigint[])`,
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'messages_stream_version_uq' });
    const next = await writer.append({
      messages: [{ messageType: 'Shipped', body: {} }],
      stream: { streamId: 'order-1', expectedVersion: 1 },
    });
    expect(next.streamVersion).toBe(2);
    const [{ segment }] = await db.query<{ segment: string }>(
      `SELECT c.relname AS segment FROM messages m JOIN pg_class c ON c.oid = m.tableoid
        WHERE m.stream_id = 'order-1' AND m.stream_version = 2`,
    );
    expect(segment).toBe('messages_0000000000002001');
  });

  it('covers a head moved far ahead by hand with its own segment, not every one between', async () => {
    app = await start(db, ordering);
    const writer = app.get(LogWriter);
    await writer.append({ messages: [{ messageType: 'Before', body: {} }] });
    // Concurrent mode records every position a reader passes without a row: a smaller jump.
    const jump = ordering === 'gapless' ? 5_000_000 : 50_000;
    await db.query(
      ordering === 'gapless'
        ? `UPDATE log_head SET position = $1 WHERE id = 1`
        : `SELECT setval('messages_index_seq', $1)`,
      [jump],
    );
    const result = await writer.append({ messages: [{ messageType: 'After', body: {} }] });
    const id = result.entries[0].status === 'created' ? result.entries[0].message.id : 0;
    // Concurrent mode: the refused insert drew jump + 1 (a hole, as any failed append leaves).
    expect(id).toBe(ordering === 'gapless' ? jump + 1 : jump + 2);
    const names = (await partitions(db)).map((p) => p.name);
    expect(names).toContain(`messages_${String(jump + 1).padStart(16, '0')}`);
    expect(names.length).toBeLessThan(6);
  });

  it('imports across segment boundaries in one transaction', async () => {
    app = await start(db, ordering);
    const lines = Array.from(
      { length: 2500 },
      (_, i) => JSON.stringify({ messageType: 'Imported', content: { i } }) + '\n',
    );
    const result = await app.get(LogImporter).import(Readable.from([lines.join('')]));
    expect(result).toMatchObject({ imported: 2500, first: 1, last: 2500 });
    const [{ n }] = await db.query<{ n: number }>(
      `SELECT count(DISTINCT m.tableoid)::int AS n FROM messages m`,
    );
    expect(n).toBe(3);
    const after = await app
      .get(LogWriter)
      .append({ messages: [{ messageType: 'Then', body: {} }] });
    expect(after.entries[0].status === 'created' && after.entries[0].message.id).toBe(2501);
  });

  it('refuses another segment size once the log holds a message', async () => {
    app = await start(db, ordering);
    await app.get(LogWriter).append({ messages: [{ messageType: 'One', body: {} }] });
    // What a start at another size runs (LogLifecycle calls it after the migrations).
    const options = app.get<ResolvedLogOptions>(LOG_MODULE_OPTIONS);
    const other = new SegmentKeeper(app.get(DataSource), { ...options, segmentSize: 2 * SIZE });
    await expect(other.start()).rejects.toMatchObject({
      code: 'invalid_configuration',
      message: expect.stringContaining(`set it back to ${SIZE}`) as unknown,
    });
    expect((await app.get(SegmentKeeper).list())[0].lastIndex).toBe(SIZE);
  });
});

describe('converting an existing log to segments', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
    await db.drop();
  });

  it('converts at the configured segment size: the first segment ends at its first multiple above the head', async () => {
    db = await createTestDatabase(undefined, { blank: true });
    await legacyLog(db, 1500);
    app = await start(db, 'gapless', SIZE);
    expect((await app.get(SegmentKeeper).list()).map((s) => [s.firstIndex, s.lastIndex])).toEqual([
      [1, 2000],
      [2001, 3000],
    ]);
    const next = await app.get(LogWriter).append({ messages: [{ messageType: 'Next', body: {} }] });
    expect(next.entries[0].status === 'created' && next.entries[0].message.id).toBe(1501);
  });

  // The rows are few enough for the suite (the conversion's cost on a large log is
  // `npm run bench:segments`'s, against a copy of the same log); that it copies nothing is
  // asserted here on the table's files: the first segment is the legacy table's own relfilenode.
  it('attaches a 100,000-row log as the first segment without copying it: every row and page reads the same, and writers go on', async () => {
    db = await createTestDatabase(undefined, { blank: true });
    const rows = 100_000;
    await legacyLog(db, rows);
    const fileOf = async (table: string) =>
      (
        await db.query<{ file: string }>(
          'SELECT pg_relation_filenode(to_regclass($1))::text AS file',
          [table],
        )
      )[0].file;
    const legacyFile = await fileOf('messages');
    // The legacy log has no tenant column nor deleted tenants yet (later migrations add them):
    // read as NULL and as none there.
    const legacyColumns = await columnsOf(db);
    const pages = async (legacy: boolean) => {
      const out: unknown[] = [];
      for (const from of [1, 12_345, 99_990]) {
        const { text, values } = readRenderedPage(from, rows, 50, {}, 1 << 20);
        const source = legacy
          ? 'WITH deleted_tenants (tenant) AS (SELECT NULL::text WHERE false) ' +
            text.replace(
              /FROM messages\b/,
              'FROM (SELECT m.*, NULL::text AS tenant FROM messages m) messages',
            )
          : text;
        out.push(await db.query(source, values));
      }
      return JSON.stringify(out);
    };
    const before = { rows: await fingerprint(db, legacyColumns), pages: await pages(true) };

    const started = performance.now();
    app = await start(db, 'gapless', 10_000_000, 2000);
    const converted = performance.now() - started;
    expect({ rows: await fingerprint(db, legacyColumns), pages: await pages(false) }).toEqual(
      before,
    );
    expect((await partitions(db)).map((p) => p.name)).toEqual([
      'messages_0000000000000001',
      'messages_0000000010000001',
    ]);
    // The first segment is the legacy table's file, not a copy of it
    expect(await fileOf('messages_0000000000000001')).toBe(legacyFile);
    const writer = app.get(LogWriter);
    const next = await writer.append({
      messages: [{ messageType: 'After', body: {} }],
      stream: { streamId: 'fill-1', expectedVersion: rows / 1000 },
    });
    expect(next).toMatchObject({ streamVersion: rows / 1000 + 1 });
    expect(next.entries[0].status === 'created' && next.entries[0].message.id).toBe(rows + 1);
    const resent = await writer.append({
      messages: [{ messageType: 'Filled', body: { g: 500 }, idempotencyKey: 'key-500' }],
    });
    expect(resent.entries[0].status === 'repeat' && resent.entries[0].message.id).toBe(500);
    // For the record (docs/storage.md): the start, migration included.
    process.stdout.write(`converted ${rows} rows in ${Math.round(converted)} ms\n`);
  });
});

/** A log as it was before segments (the migrations before them), with `rows` messages. */
async function legacyLog(db: TestDatabase, rows: number): Promise<void> {
  const dataSource = new DataSource({ type: 'postgres', url: db.url });
  await dataSource.initialize();
  try {
    await runMigrations(dataSource, [
      ...OWNERSHIP_MIGRATIONS,
      ...LOG_MIGRATIONS.slice(0, LOG_MIGRATIONS.indexOf(Segments1766100000000)),
    ]);
    await dataSource.query(
      `INSERT INTO messages (index, message_type, body, content_hash, stream_id, stream_version, category, idempotency_key, correlation_id)
       SELECT g, 'Filled', jsonb_build_object('g', g), md5(g::text),
              'fill-' || (g % 1000), g / 1000 + 1, 'fill',
              CASE WHEN g % 100 = 0 THEN 'key-' || g END, 'c-' || (g % 7)
       FROM generate_series(1, $1::int) g`,
      [rows],
    );
    await dataSource.query(
      `INSERT INTO streams (stream_id, version) SELECT stream_id, max(stream_version) FROM messages GROUP BY stream_id`,
    );
    await dataSource.query(`UPDATE log_head SET position = $1 WHERE id = 1`, [rows]);
  } finally {
    await dataSource.destroy();
  }
}

async function waitForSegments(
  keeper: SegmentKeeper,
  done: (list: Awaited<ReturnType<SegmentKeeper['list']>>) => boolean,
) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const list = await keeper.list();
    if (done(list)) return list;
    if (Date.now() > deadline) throw new Error(`segments never covered: ${JSON.stringify(list)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
