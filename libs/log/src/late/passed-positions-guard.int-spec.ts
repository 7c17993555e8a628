import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { runMigrations } from '@ordinal/pg';
import type { LogModuleOptions } from '../log-options.js';
import { PASSED_SEQUENCE, SEQUENCE } from '../log.constants.js';
import { LOG_MIGRATIONS } from '../migrations/index.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogImporter } from '../import/log-importer.service.js';
import { LogReader } from '../reader/log-reader.service.js';

/** The `messages_index_passed` trigger never refuses Ordinal's own writes. */
describe('The passed-position guard and Ordinal’s own writes', () => {
  let db: TestDatabase;
  let context: INestApplicationContext | null = null;

  const start = async (options: LogModuleOptions) => {
    context = await startLogContext(db.url, options);
    return context;
  };
  const stop = async () => {
    await context?.close();
    context = null;
  };
  const passed = async () =>
    Number(
      (
        await db.query<{ p: string | null }>(
          `SELECT pg_sequence_last_value('${PASSED_SEQUENCE}')::text AS p`,
        )
      )[0].p ?? 0,
    );
  const appendOne = async (ctx: INestApplicationContext) => {
    const [entry] = (
      await ctx.get(LogWriter).append({ messages: [{ messageType: 'Own', body: {} }] })
    ).entries;
    if (entry.status !== 'created') throw new Error(`append ${entry.status}`);
    return entry.message.id;
  };
  /** An NDJSON body of `n` lines, as an import reads it. */
  const lines = (n: number): AsyncIterable<string> =>
    (async function* () {
      for (let i = 0; i < n; i++) {
        await Promise.resolve();
        yield `{"messageType":"Imported","content":{"i":${i}}}\n`;
      }
    })();

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await stop();
    await db.drop();
  });

  it('concurrent mode: appends, an import and a restart after the watermark passed holes are all stored above the passed position', async () => {
    // Given a concurrent log whose watermark passed holes (positions drawn by ended transactions)
    const ctx = await start({ ordering: 'concurrent', gapTimeoutMs: 60_000, lateWatchMs: 0 });
    await db.query(`SELECT nextval('${SEQUENCE}') FROM generate_series(1, 3)`);
    const above = await appendOne(ctx);
    const reader = ctx.get(LogReader);
    const deadline = Date.now() + 5000;
    while ((await reader.safeHead()) < above && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await passed()).toBeGreaterThanOrEqual(above - 1);
    // When Ordinal appends, imports and restarts
    const appended = await appendOne(ctx);
    const imported = await ctx.get(LogImporter).import(lines(50));
    await stop();
    const again = await start({ ordering: 'concurrent', gapTimeoutMs: 60_000, lateWatchMs: 0 });
    const afterRestart = await appendOne(again);
    // Then every write is stored
    expect(imported).toMatchObject({ imported: 50 });
    expect(appended).toBeGreaterThan(above);
    expect(afterRestart).toBeGreaterThan(appended + 50);
  });

  it('gapless mode after concurrent mode: the head moves past positions the watermark passed, so appends and imports are stored', async () => {
    // Given a log a concurrent watermark passed beyond its last row (the start-up shortcut over
    // positions drawn and rolled back at the top)
    await start({ ordering: 'concurrent' });
    await stop();
    const [{ m }] = await db.query<{ m: string }>('SELECT max(index)::text AS m FROM messages');
    await db.query(`SELECT setval('${PASSED_SEQUENCE}', $1)`, [Number(m) + 5]);
    // When it starts in gapless mode and appends and imports
    const ctx = await start({ ordering: 'gapless' });
    const id = await appendOne(ctx);
    const imported = await ctx.get(LogImporter).import(lines(3));
    // Then both are stored above the passed position
    expect(id).toBeGreaterThan(Number(m) + 5);
    expect(imported).toMatchObject({ imported: 3 });
  });

  it('concurrent mode with a sequence behind the passed position (a restore, a hand setval): the start moves the sequence past it', async () => {
    // Given a concurrent log whose sequence was set back below positions the watermark passed
    await start({ ordering: 'concurrent' });
    await stop();
    const [{ m }] = await db.query<{ m: string }>('SELECT max(index)::text AS m FROM messages');
    await db.query(`SELECT setval('${PASSED_SEQUENCE}', $1)`, [Number(m) + 5]);
    // When it starts and appends
    const ctx = await start({ ordering: 'concurrent' });
    // Then the append is stored above the passed position
    expect(await appendOne(ctx)).toBeGreaterThan(Number(m) + 5);
  });

  it('the migration starts the passed position at the written-down watermark or the highest recorded hole', async () => {
    // Given a log migrated before the guard (on a blank database), with a watermark and recorded holes
    await db.drop();
    db = await createTestDatabase(undefined, { blank: true });
    const dataSource = new DataSource({ type: 'postgres', url: db.url, extra: { max: 2 } });
    await dataSource.initialize();
    try {
      await runMigrations(
        dataSource,
        LOG_MIGRATIONS.slice(
          0,
          LOG_MIGRATIONS.findIndex((m) => m.name === 'PassedPositionsGuard1764460800230'),
        ),
      );
      await db.query('UPDATE log_watermark SET position = 10');
      await db.query(
        `INSERT INTO log_skipped (position, held_ms, released_exactly) VALUES (15, 0, true)`,
      );
      // When the guard's migration runs
      await runMigrations(dataSource, LOG_MIGRATIONS);
    } finally {
      await dataSource.destroy();
    }
    // Then the passed position is the highest of the two, and the old hole is guarded
    expect(await passed()).toBe(15);
    await expect(
      db.query(
        `INSERT INTO messages (index, message_type, body, content_hash) VALUES (15, 'T', '{}'::jsonb, 'h')`,
      ),
    ).rejects.toMatchObject({ code: '23514', constraint: 'messages_index_passed' });
  });
});
