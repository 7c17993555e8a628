import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { LogWriter } from './log-writer.service.js';
import { categoryLockKey, NO_CATEGORY } from './category-locks.js';
import type { AppendResult } from '../message.js';

/** A log in concurrent mode in its own Nest context on the suite's database. */
const startLog = (url: string) =>
  startLogContext(url, { ordering: 'concurrent', startMarker: false, gapTimeoutMs: 60_000 });

async function waitFor<T>(
  check: () => Promise<T | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Issue 15: a concurrent flush without streams or idempotency keys is one statement
 * (sql/insert-messages.sql.ts `appendConcurrent`). Whatever its shape, the watermark relies on
 * this order (docs/design-notes.md, "One statement per concurrent flush"): the writer has its
 * transaction id before it draws a position, draws only under its categories' locks, and holds
 * the messages table (what the watermark lists as writers) whenever it has drawn one.
 */
describe('a concurrent flush keeps the order of id, locks and positions the watermark relies on', () => {
  let db: TestDatabase;
  let context: INestApplicationContext;
  let writer: LogWriter;
  let locker: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    context = await startLog(db.url);
    writer = context.get(LogWriter);
  });
  beforeEach(async () => {
    locker = new pg.Client({ connectionString: db.url, application_name: 'category-locker' });
    await locker.connect();
  });
  afterEach(async () => {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
  });
  afterAll(async () => {
    await context?.close();
    await db?.drop();
  });

  const drawn = async () => {
    const [row] = await db.query<{ drawn: string }>(
      `SELECT CASE WHEN is_called THEN last_value ELSE 0 END::text AS drawn FROM messages_index_seq`,
    );
    return Number(row.drawn);
  };

  /** The writer's session blocked behind the locker: its xid, and whether it holds the messages table. */
  const blockedWriter = (lockerPid: number) =>
    waitFor(
      async () => {
        const rows = await db.query<{ pid: number; xid: string | null; holds_table: boolean }>(
          `SELECT a.pid, a.backend_xid::text AS xid,
                  EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'relation' AND l.relation = 'messages'::regclass
                          AND l.mode = 'RowExclusiveLock' AND l.granted) AS holds_table
           FROM pg_stat_activity a WHERE $1 = ANY(pg_blocking_pids(a.pid))`,
          [lockerPid],
        );
        return rows.length === 1 ? rows[0] : false;
      },
      10_000,
      'the flush to wait for the category lock',
    );

  it('one statement (no streams): while it waits for the category lock it has its xid and holds the table, and has drawn nothing; then it draws the next position', async () => {
    // Given another transaction holding the lock of messages outside any stream
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await writer.append({ messages: [{ messageType: 'Before', body: { n: 0 } }] });
    const before = await drawn();
    await locker.query('BEGIN');
    await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [
      categoryLockKey(NO_CATEGORY).toString(),
    ]);
    // When a flush of two messages without a stream starts
    let settled: AppendResult | undefined;
    const appending = writer
      .append({
        messages: [
          { messageType: 'Waits', body: { n: 1 } },
          { messageType: 'Waits', body: { n: 2 } },
        ],
      })
      .then((r) => (settled = r));
    // Then, while it waits for the lock, it has an id and holds the table, and nothing was drawn
    const blocked = await blockedWriter(pid);
    expect(blocked.xid).not.toBeNull();
    expect(blocked.holds_table).toBe(true);
    expect(await drawn()).toBe(before);
    expect(settled).toBeUndefined();
    // And once the lock is free it draws the next positions, in row order
    await locker.query('COMMIT');
    const { entries } = await appending;
    expect(entries.map((e) => (e.status === 'created' ? e.message.id : -1))).toEqual([
      before + 1,
      before + 2,
    ]);
    const rows = await db.query<{ index: string; xid: string }>(
      'SELECT index::text AS index, transaction_id::text AS xid FROM messages WHERE index > $1 ORDER BY messages.index',
      [before],
    );
    expect(rows.map((r) => Number(r.index))).toEqual([before + 1, before + 2]);
    // One statement, one transaction: both rows carry the id the session had while it waited.
    expect(rows.map((r) => r.xid)).toEqual([blocked.xid, blocked.xid]);
  });

  it.each([
    ['one statement: an exact expected version', 'order-1', 'no_stream', true],
    ['the transactional path: expectedVersion any', 'order-2', 'any', false],
  ] as const)(
    'a stream append (%s): while it waits for its category lock it has its xid and has drawn nothing',
    async (_path, streamId, expectedVersion, oneStatement) => {
      const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
        .rows;
      const before = await drawn();
      await locker.query('BEGIN');
      await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [
        categoryLockKey('order').toString(),
      ]);
      const appending = writer.append({
        stream: { streamId, expectedVersion },
        messages: [{ messageType: 'Placed', body: {} }],
      });
      const blocked = await blockedWriter(pid);
      expect(blocked.xid).not.toBeNull();
      // The one statement's INSERT holds the table from the start; the transaction's only later.
      expect(blocked.holds_table).toBe(oneStatement);
      expect(await drawn()).toBe(before);
      await locker.query('COMMIT');
      const { entries } = await appending;
      expect(entries[0]).toMatchObject({
        status: 'created',
        message: { id: before + 1, streamVersion: 1 },
      });
      const rows = await db.query<{ xid: string }>(
        'SELECT transaction_id::text AS xid FROM messages WHERE index = $1',
        [before + 1],
      );
      expect(rows.map((r) => r.xid)).toEqual([blocked.xid]);
    },
  );

  it('an inOrder append (the AMQP input queue, the StartMarker) waits for a flush in flight, so it is stored after what was queued before it', async () => {
    // Given a stream append in flight, waiting for its category's lock
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await locker.query('BEGIN');
    await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [
      categoryLockKey('order').toString(),
    ]);
    const first = writer.append({
      stream: { streamId: 'order-ordered', expectedVersion: 'no_stream' },
      messages: [{ messageType: 'First', body: {} }],
    });
    await blockedWriter(pid);
    // When an inOrder append of another category is queued after it (enough messages that a
    // second flush would start at once beside the first), and the writer has pumped
    const second = writer.append({
      inOrder: true,
      messages: Array.from({ length: 64 }, (_, n) => ({ messageType: 'Second', body: { n } })),
    });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // Then it is still queued: nothing starts beside the flush in flight
    expect({ queued: writer.queued, inFlight: writer.flushesInFlight }).toEqual({
      queued: 64,
      inFlight: 1,
    });
    // And once the first is stored, every message of the second comes after it
    await locker.query('COMMIT');
    const [a, b] = await Promise.all([first, second]);
    const firstId = a.entries[0].status === 'created' ? a.entries[0].message.id : -1;
    const secondIds = b.entries.map((e) => (e.status === 'created' ? e.message.id : -1));
    expect(Math.min(...secondIds)).toBeGreaterThan(firstId);
  });

  it('many parallel flushes without streams leave no hole and give every message one position', async () => {
    const before = await drawn();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, n) =>
        writer.append({ messages: [{ messageType: 'Parallel', body: { n } }] }),
      ),
    );
    const ids = results
      .map((r) => (r.entries[0].status === 'created' ? r.entries[0].message.id : -1))
      .sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => before + 1 + i));
    const [{ count }] = await db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM messages WHERE index > $1',
      [before],
    );
    expect(count).toBe(200);
  });
});
