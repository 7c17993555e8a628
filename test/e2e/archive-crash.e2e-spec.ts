import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { HeldTransaction } from '../support/held-transaction.js';
import { waitFor, type HttpResponse } from '../support/test-server.js';
import { api, startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';

/** The segment the archive is killed in: indices 1..1000 (ORDINAL_SEGMENT_SIZE=1000). */
const SEGMENT = 'messages_0000000000000001';
const MESSAGES = 2500;

/** What the archive's connection (application_name 'ordinal-archive') is doing, seen from another session. */
interface ArchiveSession {
  pid: number;
  query: string;
  wait_event_type: string | null;
  blockers: number[];
  /** Its relation locks: `relation mode granted`, e.g. `messages AccessExclusiveLock true`. */
  locks: string[];
}

/**
 * The rows of [1, 1000] exactly as the archive's export writes them (`COPY (SELECT index, m::text …)
 * TO STDOUT`, text format: backslash, tab, newline and carriage return escaped), hashed the way the
 * manifest's `sha256` is: what the segment's rows are, hot or archived. The segment is one file
 * (10,000 indices a file), so its checksum is the SHA-256 of that file's SHA-256 (hex).
 */
const FINGERPRINT = `
  SELECT count(*)::int AS rows,
         encode(sha256(convert_to(encode(sha256(convert_to(string_agg(
           index::text || E'\\t' ||
           replace(replace(replace(replace(m::text, '\\', '\\\\'), E'\\t', '\\t'), E'\\n', '\\n'), E'\\r', '\\r')
           || E'\\n', '' ORDER BY index), 'UTF8')), 'hex'), 'UTF8')), 'hex') AS sha256
  FROM messages m WHERE index >= 1 AND index <= 1000`;

/*
 * An archive is one transaction on a connection of its own (libs/log/src/archive/segment-archiver.service.ts):
 * killed before its commit it must leave the segment hot and intact, after it archived and
 * verified; never lost, never half-dropped (a detached table left over). A transaction of the
 * test's holds the lock the step in question waits for, so the kill lands there. The killed
 * server's connection outlives it until PostgreSQL next talks to the client (the lock granted
 * once the test lets go, or lock_timeout): then its transaction rolls back.
 */
describe('Archive killed with kill -9 (docs/storage.md, "Archive")', () => {
  let db: TestDatabase;
  let directory: string;
  let server: OrdinalProcess | undefined;
  let holder: HeldTransaction | undefined;
  let watch: pg.Client | undefined;

  beforeEach(async () => {
    db = await createTestDatabase('ordinal_archive_crash');
    directory = await mkdtemp(join(tmpdir(), 'ordinal-archive-crash-'));
    watch = new pg.Client({ connectionString: db.url, application_name: 'ordinal-test-watch' });
    await watch.connect();
  });
  afterEach(async () => {
    await holder?.rollback().catch(() => undefined);
    await server?.stop('SIGKILL');
    await watch?.end().catch(() => undefined);
    holder = server = watch = undefined;
    await db?.drop();
    await rm(directory, { recursive: true, force: true });
  });

  const start = () =>
    startOrdinalProcess(db.url, {
      ORDINAL_ENV: 'development',
      ORDINAL_SEGMENT_SIZE: '1000',
      ORDINAL_ARCHIVE_DIR: directory,
      ORDINAL_ARCHIVE_AFTER_MS: '0',
      ORDINAL_ARCHIVE_CHECK_MS: '0',
    });

  const sql = async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
    (await watch!.query<R>(text, values)).rows;

  const fingerprint = async () => (await sql<{ rows: number; sha256: string }>(FINGERPRINT))[0];

  /** Segment 1 as the database has it: its tier, whether its table exists and is a partition of messages. */
  const segmentState = async () =>
    (
      await sql<{
        tier: string;
        table_exists: boolean;
        attached: boolean;
        manifest_sha256: string;
      }>(
        `SELECT s.tier, to_regclass(s.table_name) IS NOT NULL AS table_exists,
                EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                        WHERE i.inhparent = 'messages'::regclass AND c.relname = s.table_name) AS attached,
                s.manifest->>'sha256' AS manifest_sha256
         FROM log_segments s WHERE s.first_index = 1`,
      )
    )[0];

  /** Tables named messages_* that are not partitions of messages (a detached orphan), and the reverse. */
  const expectNoOrphanTable = async () => {
    const [row] = await sql<{ tables: string[]; partitions: string[] }>(
      `SELECT ARRAY(SELECT relname::text FROM pg_class
                    WHERE relname LIKE 'messages\\_%' AND relkind IN ('r', 'p')
                      AND relnamespace = current_schema()::regnamespace ORDER BY relname) AS tables,
              ARRAY(SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE i.inhparent = 'messages'::regclass ORDER BY c.relname) AS partitions`,
    );
    expect(row.partitions.length).toBeGreaterThanOrEqual(3);
    expect(row.tables).toEqual(row.partitions);
  };

  /** The archive's connection, if it is there. */
  const archiveSession = async (): Promise<ArchiveSession | undefined> =>
    (
      await sql<ArchiveSession>(
        `SELECT a.pid, a.query, a.wait_event_type, pg_blocking_pids(a.pid) AS blockers,
                ARRAY(SELECT l.relation::regclass::text || ' ' || l.mode || ' ' || l.granted
                      FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'relation'
                      ORDER BY 1) AS locks
         FROM pg_stat_activity a
         WHERE a.datname = current_database() AND a.application_name = 'ordinal-archive'`,
      )
    )[0];

  const manifestFile = async () => {
    try {
      return JSON.parse(await readFile(join(directory, SEGMENT, 'manifest.json'), 'utf8')) as {
        rows: number;
        sha256: string;
      };
    } catch {
      return undefined;
    }
  };

  /** Messages 1..1000 as a reader of the log gets them. */
  const readSegment = async (baseUrl: string) => {
    const page = await api(baseUrl, 'GET', '/api/events?fromIndex=1&limit=1000');
    expect(page.status).toBe(200);
    return page.body.messages as { id: number }[];
  };

  const tierOfSegment = async (baseUrl: string) => {
    const list = await api(baseUrl, 'GET', '/api/admin/segments');
    expect(list.status).toBe(200);
    return (list.body.segments as { firstIndex: number; tier: string }[]).find(
      (s) => s.firstIndex === 1,
    )?.tier;
  };

  /** A log of MESSAGES messages (bodies with characters COPY escapes), and segment 1 as it is. */
  async function fill() {
    for (let batch = 0; batch < MESSAGES / 500; batch++) {
      const sent = await api(server!.baseUrl, 'POST', '/api/events/messages', {
        messages: Array.from({ length: 500 }, (_, n) => ({
          messageType: n % 3 === 0 ? 'OrderShipped' : 'OrderPlaced',
          content: { batch, n, text: 'tab\there, line\nbreak, back\\slash "quoted" é' },
        })),
      });
      expect(sent.status).toBe(201);
    }
    const head = await api(server!.baseUrl, 'GET', '/api/events/head');
    expect(head.body.head).toBeGreaterThanOrEqual(MESSAGES);
    const rows = await fingerprint();
    expect(rows.rows).toBe(1000);
    const page = await readSegment(server!.baseUrl);
    expect(page.map((m) => m.id)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(await segmentState()).toMatchObject({ tier: 'hot', table_exists: true, attached: true });
    return { sha256: rows.sha256, page };
  }

  /**
   * Fires the archive of segment 1 (not awaited), waits until `found` finds the state the kill
   * is for, kills the server with SIGKILL, and checks the request got no answer (the archive had
   * not finished). Returns what `found` saw just before the kill.
   */
  async function killArchiveWhen<T>(found: () => Promise<T | undefined>, what: string): Promise<T> {
    const answer = api(server!.baseUrl, 'POST', '/api/admin/segments/1/archive').then(
      (response: HttpResponse) => ({ answered: response.status, body: response.body as unknown }),
      (error: Error) => ({ failed: error.message }),
    );
    const seen = await waitFor(found, 20_000, what);
    expect(await server!.stop('SIGKILL')).toBe('SIGKILL');
    server = undefined;
    // An answer would mean the archive ended (committed, or gave up) before the kill.
    expect(await answer).toEqual({ failed: expect.any(String) });
    return seen;
  }

  /** The archive's connection once `stuck` says it is where the kill is for. */
  const archiveStuck = (stuck: (session: ArchiveSession) => boolean) => async () => {
    const session = await archiveSession();
    return session && stuck(session) ? session : undefined;
  };

  /**
   * After the kill: once the killed server's archive connection is gone (its transaction rolled
   * back), segment 1 is hot and intact, nothing is left half-dropped, and a new server archives
   * it, after which it reads the same and verifies.
   */
  async function expectHotThenArchiveAgain(before: { sha256: string; page: unknown[] }) {
    await waitFor(
      async () => (await archiveSession()) === undefined,
      15_000,
      "the killed server's archive connection to end",
    );
    expect(await segmentState()).toMatchObject({ tier: 'hot', table_exists: true, attached: true });
    expect(await fingerprint()).toEqual({ rows: 1000, sha256: before.sha256 });
    await expectNoOrphanTable();

    server = await start();
    expect(await tierOfSegment(server.baseUrl)).toBe('hot');
    expect(await readSegment(server.baseUrl)).toEqual(before.page);

    const archived = await api(server.baseUrl, 'POST', '/api/admin/segments/1/archive');
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ firstIndex: 1, tier: 'archived', estimatedRows: 1000 });
    expect(await segmentState()).toMatchObject({
      tier: 'archived',
      table_exists: false,
      attached: false,
      manifest_sha256: before.sha256,
    });
    await expectNoOrphanTable();
    expect(await tierOfSegment(server.baseUrl)).toBe('archived');
    expect(await readSegment(server.baseUrl)).toEqual(before.page);
    const verified = await api(server.baseUrl, 'POST', '/api/admin/segments/1/verify');
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ firstIndex: 1, ok: true, rows: 1000 });
  }

  it.each([
    {
      when: 'between the export and the drop (DETACH waiting for messages)',
      // A reader's open transaction on messages (ACCESS SHARE, which DETACH's ACCESS EXCLUSIVE waits for)
      hold: 'SELECT 1 FROM messages WHERE index = 1500 LIMIT 1',
      waiting: 'ALTER TABLE messages DETACH PARTITION',
      label: 'the archive to wait to detach the segment',
      locks: ['messages AccessExclusiveLock false', `${SEGMENT} ShareLock true`],
    },
    {
      when: 'during the drop (DETACH and DROP done, the final UPDATE waiting)',
      // Segment 1's row of log_segments, which the archive's last UPDATE waits for
      hold: 'SELECT first_index FROM log_segments WHERE first_index = 1 FOR UPDATE',
      waiting: 'UPDATE log_segments',
      label: 'the archive to wait to mark the segment archived',
      // DETACH and DROP ran in its transaction: it holds both tables exclusively
      locks: ['messages AccessExclusiveLock true', `${SEGMENT} AccessExclusiveLock true`],
    },
  ])(
    '$when: the segment stays hot and intact, and archives again',
    async ({ hold, waiting, label, locks }) => {
      // Given a log of 2,500 messages, segment 1 sealed, and a transaction holding what the archive will wait for
      server = await start();
      const before = await fill();
      holder = await HeldTransaction.begin(db.url);
      await holder.query(hold);
      const holderPid = await holder.pid();

      // When the archive waits there, with its files written and checked, and the server is killed
      const seen = await killArchiveWhen(
        archiveStuck(
          (s) =>
            s.wait_event_type === 'Lock' &&
            s.query.startsWith(waiting) &&
            s.blockers.includes(holderPid),
        ),
        label,
      );
      for (const lock of locks) expect(seen.locks).toContain(lock);
      // The files were all written before the wait: the manifest holds exactly the segment's rows
      expect(await manifestFile()).toMatchObject({ rows: 1000, sha256: before.sha256 });
      await holder.rollback();

      // Then on restart the segment is hot and intact, and archiving it again succeeds
      await expectHotThenArchiveAgain(before);
    },
  );

  it('after the commit, before the answer: the segment is archived, reads the same and verifies', async () => {
    // Given a log of 2,500 messages, segment 1 sealed
    server = await start();
    const before = await fill();
    // (the last segment, ahead of the head: empty)
    const [later] = await sql<{ table_name: string; toast_index: string; rows: number }>(
      `SELECT s.table_name,
              (SELECT i.indexrelid::regclass::text FROM pg_class c JOIN pg_index i ON i.indrelid = c.reltoastrelid
               WHERE c.oid = to_regclass(s.table_name)) AS toast_index,
              (SELECT count(*)::int FROM messages WHERE index >= s.first_index) AS rows
       FROM log_segments s ORDER BY s.first_index DESC LIMIT 1`,
    );
    expect(later).toMatchObject({
      table_name: expect.not.stringMatching(SEGMENT),
      toast_index: expect.stringMatching(/^pg_toast\./),
      rows: 0,
    });
    // And a transaction rebuilding that segment's TOAST index (REINDEX holds it exclusively until
    // the transaction ends): the archive's answer, the segment list with each hot segment's size
    // (pg_total_relation_size opens every index, TOAST's included), waits for it; the archive's
    // transaction does not, nor does a read of messages (nothing of that segment is detoasted).
    // (Not LOCK TABLE on the segment: the dashboard's max(index) over messages would wait for it
    // holding messages, and the archive's DETACH wait for that.)
    holder = await HeldTransaction.begin(db.url);
    await holder.query(`REINDEX INDEX ${later.toast_index}`);
    const holderPid = await holder.pid();

    // When the archive has committed and the server is killed before it answers
    const seen = await killArchiveWhen(async () => {
      const [row] = await sql<{ tier: string; waiting: string[]; archive_state: string | null }>(
        `SELECT (SELECT tier FROM log_segments WHERE first_index = 1) AS tier,
                ARRAY(SELECT a.query FROM pg_stat_activity a
                      WHERE a.datname = current_database() AND $1 = ANY(pg_blocking_pids(a.pid))) AS waiting,
                (SELECT a.state FROM pg_stat_activity a
                 WHERE a.datname = current_database() AND a.application_name = 'ordinal-archive') AS archive_state`,
        [holderPid],
      );
      return row.tier === 'archived' && row.waiting.length > 0 ? row : undefined;
    }, 'the archive to commit and its answer to wait');
    // (its connection, the transaction committed, still open: the archive had not returned)
    expect(seen.archive_state).toBe('idle');
    // (only the answer waits: nothing that holds messages, which the DETACH would have waited for)
    expect(seen.waiting.every((q) => q.includes('pg_total_relation_size'))).toBe(true);
    await holder.rollback();

    // Then on restart the segment is archived: its table gone, nothing left over, its manifest
    // the rows it had, read the same from the files, and its files verify
    await waitFor(
      async () => (await archiveSession()) === undefined,
      15_000,
      "the killed server's archive connection to end",
    );
    expect(await segmentState()).toMatchObject({
      tier: 'archived',
      table_exists: false,
      attached: false,
      manifest_sha256: before.sha256,
    });
    await expectNoOrphanTable();
    server = await start();
    expect(await tierOfSegment(server.baseUrl)).toBe('archived');
    expect(await readSegment(server.baseUrl)).toEqual(before.page);
    const verified = await api(server.baseUrl, 'POST', '/api/admin/segments/1/verify');
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ firstIndex: 1, ok: true, rows: 1000 });
    const again = await api(server.baseUrl, 'POST', '/api/admin/segments/1/archive');
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'segment_not_archivable' });
  });
});
