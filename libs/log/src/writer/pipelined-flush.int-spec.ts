import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { LOCKS } from '../log.constants.js';
import { LiveRouter } from '../router/live-router.service.js';
import { LogWriter } from './log-writer.service.js';
import { STREAM_DELETED_TYPE, type AppendResult } from '../message.js';
import { StreamTombstonedError } from '../errors/index.js';

/** A log in gapless mode in its own Nest context on the suite's database. */
const startLog = (url: string, duplicateWindow: number) =>
  startLogContext(url, { ordering: 'gapless', duplicateWindow, startMarker: false });

/** Polls `check` (a condition, not a delay) until it holds. */
async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const ids = (result: AppendResult) =>
  result.entries.map((e) => (e.status === 'created' ? e.message.id : -1));

/**
 * Issue 30: with the database across a network, a gapless writer that sends one flush at a
 * time makes every append that arrives during a flush wait for that flush's answer to travel
 * back before its own is sent — a round trip more per publish. The log lock in PostgreSQL
 * already serialises gapless flushes (as it does those of several processes), so a flush is
 * sent beside one in flight and waits there, on the database's side, for its commit.
 */
describe('gapless flushes are pipelined: serialised by the log lock in PostgreSQL, not by a round trip in the writer', () => {
  let db: TestDatabase;
  let context: INestApplicationContext | undefined;
  let locker: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  beforeEach(async () => {
    locker = new pg.Client({ connectionString: db.url, application_name: 'log-locker' });
    await locker.connect();
  });
  afterEach(async () => {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
    await context?.close();
    context = undefined;
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** Sessions of the writer waiting for the log lock the locker holds. */
  const waitingForLock = async (lockerPid: number) => {
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
      [lockerPid],
    );
    return row.n;
  };

  it('a flush is sent while another waits for the log lock, both commit gap-free, and the live router delivers them in index order', async () => {
    // Given a gapless writer (duplicate window off) and a transaction holding the log lock
    context = await startLog(db.url, 0);
    const writer = context.get(LogWriter);
    const router = context.get(LiveRouter);
    const first = await writer.append({ messages: [{ messageType: 'Before', body: { n: 0 } }] });
    const head = ids(first)[0];
    const feed = router.open({ fromIndex: head + 1, toIndex: head + 3 });
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await locker.query('BEGIN');
    await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [LOCKS.log]);

    // When one append's flush waits for the lock and another append comes
    const a = writer.append({ messages: [{ messageType: 'A', body: { n: 1 } }] });
    await waitFor(async () => (await waitingForLock(pid)) === 1, 'the first flush to wait');
    const b = writer.append({
      messages: [
        { messageType: 'B', body: { n: 2 } },
        { messageType: 'B', body: { n: 3 } },
      ],
    });

    // Then the second flush is sent too, and waits at the lock beside the first
    await waitFor(async () => (await waitingForLock(pid)) === 2, 'the second flush to be sent');
    expect(writer.flushesInFlight).toBe(2);

    // And once the lock is free both commit, after the head and without a gap
    await locker.query('COMMIT');
    const stored = [...ids(await a), ...ids(await b)].sort((x, y) => x - y);
    expect(stored).toEqual([head + 1, head + 2, head + 3]);
    const got: number[] = [];
    for await (const m of feed) got.push(m.id);
    expect(got).toEqual([head + 1, head + 2, head + 3]);
    const [{ position }] = await db.query<{ position: string }>(
      'SELECT position::text FROM log_head WHERE id = 1',
    );
    expect(Number(position)).toBe(head + 3);
  });

  it('while the duplicate window is open, flushes still go one at a time (each is planned against the hashes committed before it)', async () => {
    // Given a gapless writer whose duplicate window is open, and the log lock held elsewhere
    context = await startLog(db.url, 2000);
    const writer = context.get(LogWriter);
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await locker.query('BEGIN');
    await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [LOCKS.log]);

    // When the same body is appended twice, the second while the first's flush waits
    const a = writer.append({ messages: [{ messageType: 'Same', body: { n: 'same' } }] });
    await waitFor(async () => (await waitingForLock(pid)) === 1, 'the first flush to wait');
    const b = writer.append({ messages: [{ messageType: 'Same', body: { n: 'same' } }] });

    // Then the second is not sent beside it (a round trip to the database later, the writer has
    // long had its turn to start it): it waits for the first's commit, and is a duplicate
    await waitFor(() => writer.queued === 1, 'the second append to queue');
    expect(await waitingForLock(pid)).toBe(1);
    expect(writer.flushesInFlight).toBe(1);
    expect(writer.queued).toBe(1);
    await locker.query('COMMIT');
    expect((await a).entries[0].status).toBe('created');
    expect((await b).entries[0].status).toBe('duplicate');
  });

  it('a delete is flushed alone: an append sent after it never lands on the stream it ended (its statement could not see the delete)', async () => {
    // Given a gapless writer, a stream at version 1, and the log lock held elsewhere
    context = await startLog(db.url, 0);
    const writer = context.get(LogWriter);
    await writer.append({
      stream: { streamId: 'shelf-1', expectedVersion: 'no_stream' },
      messages: [{ messageType: 'ShelfBuilt', body: { n: 1 } }],
    });
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await locker.query('BEGIN');
    await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [LOCKS.log]);

    // When an append waits for the lock, the stream is tombstoned, and then another append to
    // it (planned at version 1, as a client that read it before the delete would) comes
    const a = writer.append({ messages: [{ messageType: 'Elsewhere', body: { n: 2 } }] });
    await waitFor(async () => (await waitingForLock(pid)) === 1, 'the first flush to wait');
    const deleted = writer.append({
      stream: { streamId: 'shelf-1', expectedVersion: 1 },
      delete: 'tombstone',
      skipDuplicateWindow: true,
      messages: [
        {
          messageType: STREAM_DELETED_TYPE,
          userId: 'system',
          body: { streamId: 'shelf-1', mode: 'tombstone', lastVersion: 1 },
        },
      ],
    });
    await waitFor(() => writer.queued + writer.flushesInFlight === 2, 'the delete to be taken in');
    const late = writer.append({
      stream: { streamId: 'shelf-1', expectedVersion: 1 },
      messages: [{ messageType: 'ShelfMoved', body: { n: 3 } }],
    });
    // (held back behind the delete, or — what this guards against — sent beside it)
    await waitFor(
      async () => writer.queued === 2 || (await waitingForLock(pid)) === 3,
      'the append to be held back or sent',
    );
    expect(await waitingForLock(pid)).toBe(1);
    await locker.query('COMMIT');

    // Then the delete commits, and the later append is refused: the stream is tombstoned
    expect((await a).entries[0].status).toBe('created');
    expect((await deleted).entries[0].status).toBe('created');
    await expect(late).rejects.toBeInstanceOf(StreamTombstonedError);
    const rows = await db.query<{ stream_version: string }>(
      `SELECT stream_version::text FROM messages WHERE stream_id = 'shelf-1' ORDER BY index`,
    );
    expect(rows.map((r) => Number(r.stream_version))).toEqual([1]);
  });

  it('an append whose statement began before another process tombstoned the stream is refused, not stored after the delete', async () => {
    // Given a gapless writer, a stream at version 1, and another process holding the log lock
    context = await startLog(db.url, 0);
    const writer = context.get(LogWriter);
    await writer.append({
      stream: { streamId: 'crate-1', expectedVersion: 'no_stream' },
      messages: [{ messageType: 'CrateFilled', body: { n: 1 } }],
    });
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await locker.query('BEGIN');
    await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [LOCKS.log]);
    // When an append planned at version 1 waits for the lock (its statement has begun)
    const late = writer.append({
      stream: { streamId: 'crate-1', expectedVersion: 1 },
      messages: [{ messageType: 'CrateMoved', body: { n: 2 } }],
    });
    await waitFor(async () => (await waitingForLock(pid)) === 1, 'the append to wait');
    // And the other process tombstones the stream and commits, as its delete does
    await locker.query(
      `INSERT INTO stream_states (stream_id, state, deleted_through) VALUES ('crate-1', 'tombstoned', 1)`,
    );
    await locker.query('COMMIT');
    // Then the append is refused, and nothing was stored on the stream after its first event
    await expect(late).rejects.toBeInstanceOf(StreamTombstonedError);
    const rows = await db.query<{ stream_version: string }>(
      `SELECT stream_version::text FROM messages WHERE stream_id = 'crate-1' ORDER BY index`,
    );
    expect(rows.map((r) => Number(r.stream_version))).toEqual([1]);
  });

  it('an inOrder append (the AMQP input queue) is not sent beside a flush in flight: it is stored after everything queued before it', async () => {
    // Given a gapless writer and the log lock held elsewhere, one append's flush waiting for it
    context = await startLog(db.url, 0);
    const writer = context.get(LogWriter);
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await locker.query('BEGIN');
    await locker.query('SELECT pg_advisory_xact_lock($1::bigint)', [LOCKS.log]);
    const a = writer.append({
      messages: [{ messageType: 'First', body: { n: 1 } }],
      inOrder: true,
    });
    await waitFor(async () => (await waitingForLock(pid)) === 1, 'the first flush to wait');

    // When the next delivery of the ordered source is appended
    const b = writer.append({
      messages: [{ messageType: 'Second', body: { n: 2 } }],
      inOrder: true,
    });

    // Then it waits in the writer, not beside the first at the lock, and lands after it
    await waitFor(() => writer.queued === 1, 'the second append to queue');
    expect(await waitingForLock(pid)).toBe(1);
    await locker.query('COMMIT');
    expect(ids(await b)[0]).toBe(ids(await a)[0] + 1);
  });
});
