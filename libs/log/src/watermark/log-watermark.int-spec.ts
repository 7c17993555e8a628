import fc from 'fast-check';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { runMigrations } from '@ordinal/pg';
import { LOG_MIGRATIONS } from '../migrations/index.js';
import { LogWatermark } from './log-watermark.service.js';
import { resolveLogOptions, type LogModuleOptions } from '../log-options.js';

/** A writer like Ordinal's concurrent flush: xid first, positions drawn inside the INSERT. */
class RawWriter {
  private constructor(private readonly client: pg.Client) {}
  static async open(url: string): Promise<RawWriter> {
    const client = new pg.Client({ connectionString: url, application_name: 'raw-writer' });
    await client.connect();
    return new RawWriter(client);
  }
  async begin(): Promise<void> {
    await this.client.query('BEGIN');
    await this.client.query('SELECT pg_current_xact_id()');
  }
  async insert(category: string, count = 1): Promise<number[]> {
    const { rows } = await this.client.query<{ index: number }>(
      `INSERT INTO messages (index, message_type, category, body, content_hash)
       SELECT nextval('messages_index_seq'), 'T', $1, '{}'::jsonb, 'h' FROM generate_series(1, $2) RETURNING index::int AS index`,
      [category, count],
    );
    return rows.map((r) => r.index).sort((a, b) => a - b);
  }
  commit = () => this.client.query('COMMIT');
  rollback = () => this.client.query('ROLLBACK');
  end = () => this.client.end();
}

describe('LogWatermark in concurrent mode (S2-S4, real concurrent transactions)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const writers: RawWriter[] = [];
  const watermark = (options: LogModuleOptions = {}) =>
    new LogWatermark(dataSource, resolveLogOptions({ ordering: 'concurrent', ...options }));
  const writer = async () => {
    const w = await RawWriter.open(db.url);
    writers.push(w);
    return w;
  };
  /** A drew a lower position and is held open; B (another category) committed a higher one. */
  const holeBelowCommit = async () => {
    const a = await writer();
    const b = await writer();
    await a.begin();
    const [pa] = await a.insert('order');
    await b.begin();
    const [pb] = await b.insert('invoice');
    await b.commit();
    return { a, pa, pb };
  };

  // Each test gets a log of its own: a hole one test leaves must not hold the next.
  beforeEach(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } });
    await dataSource.initialize();
    await runMigrations(dataSource, LOG_MIGRATIONS);
  });
  afterEach(async () => {
    await Promise.all(
      writers.splice(0).map((w) =>
        w
          .rollback()
          .catch(() => undefined)
          .then(() => w.end()),
      ),
    );
    await dataSource?.destroy();
    await db?.drop();
  });

  const headNow = async () =>
    Number(
      (await db.query<{ m: string }>('SELECT coalesce(max(index), 0) AS m FROM messages'))[0].m,
    );

  it('moves over a long committed run in counted ranges and still stops at the one open position inside it', async () => {
    // Given a watermark at 0, a run of 40,000 committed positions with one still being written at 23,457 and one recorded as skipped at 30,001
    const w = watermark({ gapTimeoutMs: 60_000 });
    expect(await w.safeHead()).toBe(0);
    const a = await writer();
    await a.begin();
    await db.query("SELECT setval('messages_index_seq', 23456)");
    const [pa] = await a.insert('order');
    expect(pa).toBe(23_457);
    await db.query(
      `INSERT INTO messages (index, message_type, body, content_hash) SELECT g, 'T', '{}'::jsonb, 'h' FROM generate_series(1, 40000) g WHERE g NOT IN (23457, 30001)`,
    );
    await db.query("SELECT setval('messages_index_seq', 40000)");
    await db.query('INSERT INTO log_skipped (position, held_ms) VALUES (30001, 0)');
    // Then the watermark stops right below the open position
    expect(await w.safeHead()).toBe(23_456);
    // And once it commits, passes the recorded position to the end of the run
    await a.commit();
    expect(await w.safeHead()).toBe(40_000);
  });

  it('holds at a lower position still being written, then delivers past it once it commits', async () => {
    // Given a running watermark, A drew a lower position and is still open, while B (another category) committed a higher one
    const w = watermark({ gapTimeoutMs: 60_000 });
    expect(await w.safeHead()).toBe(0);
    const base = await headNow();
    const { a, pa, pb } = await holeBelowCommit();
    expect(pb).toBeGreaterThan(pa);
    // Then the watermark does not pass A's position
    expect(await w.safeHead()).toBe(pa - 1);
    expect(await w.safeHead()).toBe(pa - 1);
    expect(w.heldHole).toMatchObject({
      from: pa,
      to: pa,
      writers: [expect.objectContaining({ applicationName: 'raw-writer' })],
    });
    expect(base).toBeLessThan(pa);
    // When A commits, both are below the watermark
    await a.commit();
    expect(await w.safeHead()).toBe(pb);
  });

  it('advances across digit boundaries (9 -> 10, 99 -> 100) in index order', async () => {
    // Given 120 committed positions and a fresh watermark
    const w0 = watermark({ gapTimeoutMs: 60_000 });
    expect(await w0.safeHead()).toBe(0);
    const a = await writer();
    await a.begin();
    await a.insert('order', 120);
    await a.commit();
    // Then the watermark reaches the last one (positions compared as numbers, not text)
    expect(await w0.safeHead()).toBe(120);
    expect(w0.counters.holesHeld).toBe(0);
  });

  it('with exact release off, moves past a rolled-back hole only at the timeout', async () => {
    const { a, pa, pb } = await holeBelowCommit();
    const w = watermark({ gapTimeoutMs: 800, exactRelease: false });
    expect(await w.safeHead()).toBe(pa - 1);
    const seen = Date.now();
    await a.rollback();
    // Still held right after the rollback
    expect(await w.safeHead()).toBe(pa - 1);
    // And released once the timeout passed (poll with a deadline)
    let head = pa - 1;
    while (head < pb && Date.now() - seen < 10_000) {
      head = await w.safeHead();
      if (head < pb) await new Promise((r) => setTimeout(r, 50));
    }
    expect(head).toBe(pb);
    expect(Date.now() - seen).toBeGreaterThanOrEqual(700);
    expect(w.counters.holesAbandoned).toBe(1);
    const skipped = await db.query('SELECT position FROM log_skipped WHERE position = $1', [pa]);
    expect(skipped).toHaveLength(1);
  });

  it('releases a rolled-back hole exactly, well before the timeout, even while a long transaction holds xmin back', async () => {
    // Given an unrelated long transaction that never touches the log holds the cluster's xmin
    const idle = new pg.Client({ connectionString: db.url });
    await idle.connect();
    await idle.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await idle.query('SELECT pg_current_xact_id(), count(*) FROM pg_class');
    try {
      const w = watermark({ gapTimeoutMs: 30_000 });
      await w.safeHead();
      const { a, pa, pb } = await holeBelowCommit();
      expect(await w.safeHead()).toBe(pa - 1);
      // When A rolls back
      const rolledBack = Date.now();
      await a.rollback();
      // Then the watermark moves past the hole at once (exact release), not after 30 s
      expect(await w.safeHead()).toBe(pb);
      expect(Date.now() - rolledBack).toBeLessThan(2_000);
      expect(w.counters.holesReleasedExactly).toBe(1);
      expect(w.counters.holesAbandoned).toBe(0);
    } finally {
      await idle.query('ROLLBACK');
      await idle.end();
    }
  });

  it('abandons at once with gapTimeoutMs <= 0', async () => {
    const { a, pb } = await holeBelowCommit();
    expect(await watermark({ gapTimeoutMs: 0 }).safeHead()).toBe(pb);
    await a.rollback();
  });

  it('reports a writer slower than the timeout as a late arrival', async () => {
    // Given A is held open past a short timeout while B committed above it
    const { a, pa, pb } = await holeBelowCommit();
    const w = watermark({ gapTimeoutMs: 200, lateRescanMs: 60_000 });
    const late: number[] = [];
    w.onLate((positions) => late.push(...positions));
    let head = 0;
    const deadline = Date.now() + 10_000;
    while (head < pb && Date.now() < deadline) {
      head = await w.safeHead();
      if (head < pb) await new Promise((r) => setTimeout(r, 50));
    }
    expect(head).toBe(pb);
    // When A finally commits
    await a.commit();
    // Then the re-scan finds it and reports it as late
    expect(await w.rescanLate()).toEqual([pa]);
    expect(late).toEqual([pa]);
    expect(w.counters.lateArrivals).toBe(1);
    expect(await w.rescanLate()).toEqual([]);
  });

  it('property: a reader following the watermark gets exactly the committed positions, in order', async () => {
    type Op = { writer: number; action: 'insert' | 'commit' | 'rollback'; category: number };
    const op = fc.record({
      writer: fc.integer({ min: 0, max: 2 }),
      action: fc.constantFrom('insert', 'insert', 'commit', 'rollback'),
      category: fc.integer({ min: 0, max: 3 }),
    }) as fc.Arbitrary<Op>;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        await db.query('TRUNCATE messages');
        const pool = await Promise.all([0, 1, 2].map(() => writer()));
        try {
          const open = [false, false, false];
          const pending: number[][] = [[], [], []];
          const committed: number[] = [];
          const w = watermark({ gapTimeoutMs: 60_000 });
          const delivered: number[] = [];
          let position = 0;
          const follow = async () => {
            const head = await w.safeHead();
            const rows = await db.query<{ index: string }>(
              'SELECT index FROM messages WHERE index > $1 AND index <= $2 ORDER BY index',
              [position, head],
            );
            delivered.push(...rows.map((r) => Number(r.index)));
            position = Math.max(position, head);
          };
          for (const { writer: i, action, category } of ops) {
            if (action === 'insert') {
              if (!open[i]) {
                await pool[i].begin();
                open[i] = true;
              }
              pending[i].push(...(await pool[i].insert(`c${category}`, 1 + (category % 2))));
            } else if (open[i]) {
              await (action === 'commit' ? pool[i].commit() : pool[i].rollback());
              if (action === 'commit') committed.push(...pending[i]);
              pending[i] = [];
              open[i] = false;
            }
            await follow();
          }
          for (let i = 0; i < 3; i++) {
            if (open[i]) {
              await pool[i].commit();
              committed.push(...pending[i]);
            }
          }
          await follow();
          committed.sort((x, y) => x - y);
          expect(delivered).toEqual(committed);
        } finally {
          await Promise.all(
            writers.splice(0).map((x) =>
              x
                .rollback()
                .catch(() => undefined)
                .then(() => x.end()),
            ),
          );
        }
      }),
      { numRuns: Number(process.env.PROP_RUNS ?? 15), verbose: true },
    );
  }, 180_000);
  describe('as a replica reader (role replica-reader): follows, never decides', () => {
    it('does not pass a hole whose writer rolled back until a primary watermark has recorded it', async () => {
      // Given a follower and a primary watermark on the same log, A holding a lower position below B's commit
      const follower = watermark({ role: 'replica-reader', gapTimeoutMs: 0 });
      const primary = watermark({ gapTimeoutMs: 60_000 });
      // (the primary's start-up shortcut is behind it: from here on it records every hole it passes)
      expect(await primary.safeHead()).toBe(0);
      const base = await headNow();
      const { a, pa, pb } = await holeBelowCommit();
      expect(await follower.safeHead()).toBe(pa - 1);
      expect(follower.heldHole?.from).toBe(pa);

      // When A rolls back: nobody can fill the hole any more, and its gap timeout (0) is long gone
      await a.rollback();
      // Then the follower still waits: it has no writers to judge and no timer (both the primary's)
      expect(await follower.safeHead()).toBe(pa - 1);

      // When the primary's watermark passes the hole (exact release, recorded in log_skipped)
      expect(await primary.safeHead()).toBe(pb);
      // Then the follower passes it too, and wrote nothing (the only record is the primary's)
      expect(await follower.safeHead()).toBe(pb);
      expect(follower.heldHole).toBeNull();
      const records = await db.query<{ position: string }>(
        'SELECT position::text AS position FROM log_skipped WHERE position > $1',
        [base],
      );
      expect(records.map((r) => Number(r.position))).toEqual([pa]);
    });

    it('starts from the position the primary wrote down (its start-up shortcut records no holes one by one)', async () => {
      // Given holes left by rolled-back writers below committed rows, passed by a new primary watermark's shortcut
      const { a, pb } = await holeBelowCommit();
      await a.rollback();
      const primary = watermark();
      expect(await primary.safeHead()).toBe(pb);
      const [{ position }] = await db.query<{ position: string }>(
        'SELECT position::text AS position FROM log_watermark',
      );
      expect(Number(position)).toBe(pb);
      // Then a new follower starts there and reads nothing past it
      const follower = watermark({ role: 'replica-reader' });
      expect(await follower.safeHead()).toBe(pb);
    });
  });
});
