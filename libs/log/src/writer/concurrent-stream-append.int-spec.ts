import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { watchFlushes } from '@ordinal/test-support/watch-flushes';
import { startLogContext } from '@ordinal/test-support/log-context';
import { LogWriter } from './log-writer.service.js';
import { categoryLockKey } from './category-locks.js';
import { STREAM_DELETED_TYPE, type AppendResult, type DeleteMode } from '../message.js';
import {
  StreamDeletedError,
  StreamTombstonedError,
  VersionConflictError,
} from '../errors/index.js';

/** A log in concurrent mode in its own Nest context on the suite's database. */
const startLog = (url: string) =>
  startLogContext(url, { ordering: 'concurrent', startMarker: false, gapTimeoutMs: 60_000 });

/** Polls `check` (a condition, not a delay) until it holds. */
async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const ids = (result: AppendResult) =>
  result.entries.map((e) => (e.status === 'created' ? e.message.id : -1));

/**
 * Issue 30: across a network every statement of an append is a round trip. Concurrent mode
 * appended to a stream in a transaction of five (BEGIN, category locks, state read, INSERT,
 * COMMIT); an append with explicit expected versions (no idempotency key, no `any`) is now one
 * statement in autocommit, like gapless mode's, and falls back to the transaction only when a
 * stream is not where the append expects it (or has a lifecycle state or retention the
 * transaction must read).
 */
describe('a concurrent aggregate append (a stream, an expected version) is one statement', () => {
  let db: TestDatabase;
  let context: INestApplicationContext;
  let writer: LogWriter;
  let watch: ReturnType<typeof watchFlushes>;
  const hiddenAtAppend: boolean[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    context = await startLog(db.url);
    writer = context.get(LogWriter);
    writer.onCommit((_messages, _bytes, hidden) => hiddenAtAppend.push(hidden));
    watch = watchFlushes(context.get(DataSource));
  });
  beforeEach(() => {
    watch.leases.length = 0;
    hiddenAtAppend.length = 0;
  });
  afterAll(async () => {
    watch?.stop();
    await context?.close();
    await db?.drop();
  });

  const drawn = async () => {
    const [row] = await db.query<{ drawn: string }>(
      `SELECT CASE WHEN is_called THEN last_value ELSE 0 END::text AS drawn FROM messages_index_seq`,
    );
    return Number(row.drawn);
  };

  const append = (streamId: string, expectedVersion: number | 'no_stream', n = 1) =>
    writer.append({
      stream: { streamId, expectedVersion },
      messages: Array.from({ length: n }, (_, i) => ({ messageType: 'Put', body: { i } })),
    });

  const remove = (streamId: string, version: number, mode: DeleteMode) =>
    writer.append({
      stream: { streamId, expectedVersion: version },
      delete: mode,
      skipDuplicateWindow: true,
      messages: [
        {
          messageType: STREAM_DELETED_TYPE,
          userId: 'system',
          body: { streamId, mode, lastVersion: version },
        },
      ],
    });

  const versions = async (streamId: string) =>
    (
      await db.query<{ index: string; stream_version: string }>(
        `SELECT index::text, stream_version::text FROM messages WHERE stream_id = $1 ORDER BY index`,
        [streamId],
      )
    ).map((r) => [Number(r.index), Number(r.stream_version)]);

  it('sends one statement per append, with no_stream and then with the version it reached, and stores the messages in stream order', async () => {
    // When a stream is created and appended to with its version, in concurrent mode
    const first = await append('cart-1', 'no_stream', 2);
    const firstSent = watch.leases.flat();
    watch.leases.length = 0;
    const second = await append('cart-1', 2);

    // Then each append was one statement on one leased connection
    expect(firstSent).toHaveLength(1);
    expect(watch.leases).toEqual([[expect.any(String)]]);
    // And the stream's versions follow its positions, the head moved, and the results say so
    expect(first.streamVersion).toBe(2);
    expect(second.streamVersion).toBe(3);
    const stored = [...ids(first), ...ids(second)];
    expect(await versions('cart-1')).toEqual(stored.map((index, i) => [index, i + 1]));
    expect(stored).toEqual([...stored].sort((a, b) => a - b));
    const [{ version }] = await db.query<{ version: string }>(
      `SELECT version::text FROM streams WHERE stream_id = 'cart-1'`,
    );
    expect(Number(version)).toBe(3);
    for (const entry of second.entries)
      expect(entry.status === 'created' && entry.message.createdAt).toMatch(/^\d{4}-/);
    expect(hiddenAtAppend).toEqual([false, false]);
  });

  it('a stale expected version changes nothing and draws no position; the transaction answers the conflict', async () => {
    // Given a stream at version 2
    await append('cart-2', 'no_stream', 2);
    const before = await drawn();
    watch.leases.length = 0;

    // When an append expects it still absent
    await expect(append('cart-2', 'no_stream')).rejects.toBeInstanceOf(VersionConflictError);

    // Then the one statement was tried, then the transactional path decided, and nothing moved
    expect(watch.leases).toHaveLength(2);
    expect(watch.leases[0]).toHaveLength(1);
    expect(watch.leases[1][0]).toBe('BEGIN');
    expect(await drawn()).toBe(before);
    expect((await versions('cart-2')).map(([, v]) => v)).toEqual([1, 2]);
    // (the stream's head too: the statement moves it only with the rows)
    const [{ version }] = await db.query<{ version: string }>(
      `SELECT version::text FROM streams WHERE stream_id = 'cart-2'`,
    );
    expect(Number(version)).toBe(2);
  });

  it('a soft-deleted stream is re-created by no_stream with its versions going on, and refused at a positive version, as by the transaction', async () => {
    // Given a stream of two events, soft-deleted
    await append('cart-3', 'no_stream', 2);
    await remove('cart-3', 2, 'soft');

    // When an append expects version 2 (a client that read it before the delete)
    await expect(append('cart-3', 2)).rejects.toBeInstanceOf(StreamDeletedError);
    // And another re-creates it
    const recreated = await append('cart-3', 'no_stream');

    // Then the re-created stream goes on at version 3, live again, and appends at 3 go on in one statement
    expect(recreated.streamVersion).toBe(3);
    const [{ state }] = await db.query<{ state: string }>(
      `SELECT state FROM stream_states WHERE stream_id = 'cart-3'`,
    );
    expect(state).toBe('live');
    watch.leases.length = 0;
    expect((await append('cart-3', 3)).streamVersion).toBe(4);
    expect(watch.leases.flat()).toHaveLength(1);
  });

  it('a tombstoned stream refuses an append with any expected version', async () => {
    await append('cart-4', 'no_stream');
    await remove('cart-4', 1, 'tombstone');
    await expect(append('cart-4', 1)).rejects.toBeInstanceOf(StreamTombstonedError);
    await expect(append('cart-4', 'no_stream')).rejects.toBeInstanceOf(StreamTombstonedError);
    expect((await versions('cart-4')).map(([, v]) => v)).toEqual([1]);
  });

  it("a stream whose retention (its own truncateBefore, its category's maxCount) hides the append as it commits is told to the live readers", async () => {
    // Given a stream whose own truncateBefore is 5, and a category keeping one event a stream
    await db.query(`INSERT INTO stream_states (stream_id, truncate_before) VALUES ('cart-5', 5)`);
    await db.query(`INSERT INTO category_rules (category, max_count) VALUES ('bin', 1)`);

    // When each gets two events
    await append('cart-5', 'no_stream', 2);
    await append('bin-1', 'no_stream', 2);

    // Then each flush told its listeners that what it committed is hidden at once
    expect(hiddenAtAppend).toEqual([true, true]);
  });

  it('a tombstone committed while the append waits for its category lock is seen: the append is refused, not stored after it', async () => {
    // Given a stream at version 1, and another process holding its category's lock
    await append('crate-1', 'no_stream');
    const locker = new pg.Client({ connectionString: db.url, application_name: 'category-locker' });
    await locker.connect();
    try {
      const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
        .rows;
      await locker.query('BEGIN');
      await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [
        categoryLockKey('crate').toString(),
      ]);
      // When an append planned at version 1 waits for the lock (its statement has begun)
      const late = append('crate-1', 1);
      await waitFor(async () => {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
          [pid],
        );
        return row.n === 1;
      }, 'the append to wait for the category lock');
      // And the other process tombstones the stream and commits
      await locker.query(
        `INSERT INTO stream_states (stream_id, state, deleted_through) VALUES ('crate-1', 'tombstoned', 1)`,
      );
      await locker.query('COMMIT');
      // Then the append is refused, and nothing was stored on the stream after its first event
      await expect(late).rejects.toBeInstanceOf(StreamTombstonedError);
      expect((await versions('crate-1')).map(([, v]) => v)).toEqual([1]);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('of 20 appends with one expected version, sent together, exactly one is stored', async () => {
    await append('cart-6', 'no_stream');
    const before = await drawn();
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => append('cart-6', 1)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results)
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflictError);
    expect((await versions('cart-6')).map(([, v]) => v)).toEqual([1, 2]);
    // No position was drawn for the refused ones: the log has no hole there.
    expect(await drawn()).toBe(before + 1);
  });
});
