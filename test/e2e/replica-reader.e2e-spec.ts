import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, waitFor } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import { startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';
import { spawnServer, type ServerProcess } from '../support/server-process.js';
import { HeldTransaction } from '../support/held-transaction.js';
import { startStreamingReplica, type StreamingReplica } from '../support/streaming-replica.js';

/**
 * Issue 15, replica readers: servers started with ORDINAL_ROLE=replica-reader on a real
 * PostgreSQL streaming replica of the local server (a second cluster on another port, made by
 * pg_basebackup, test/support/streaming-replica.ts), beside a primary server on the primary.
 *
 * In concurrent mode a replica cannot see the primary's writers (pg_locks), so it must never
 * pass a hole the primary is still filling; it follows the primary's decisions instead.
 */
describe('replica readers on a streaming replica (issue 15)', () => {
  let replica: StreamingReplica | null = null;
  const databases: TestDatabase[] = [];
  const servers: ServerProcess[] = [];
  const connections: SseConnection[] = [];
  const held: HeldTransaction[] = [];
  /** The replica reader's default poll (docs/configuration.md): live delivery on a replica relies on it. */
  const REPLICA_POLL_MS = 200;
  /** A page read on the replica and the event's write to the stream, on a loaded machine. */
  const READ_ALLOWANCE_MS = 300;

  const database = async (blank = false) => {
    const db = await createTestDatabase('ordinal_replica', { blank });
    databases.push(db);
    return db;
  };
  const start = async (url: string, env: Record<string, string>) => {
    const server = await startOrdinalProcess(url, env);
    servers.push(server);
    return server;
  };
  const connect = async (server: OrdinalProcess, path: string) => {
    const connection = await SseConnection.open(server.baseUrl, path, DEV_AUTH);
    connections.push(connection);
    expect(connection.status).toBe(200);
    return connection;
  };
  const publish = async (server: OrdinalProcess, messageType: string, content: unknown) => {
    const res = await http(server.baseUrl, 'PUT', '/api/events/message', { messageType, content });
    expect(res.status).toBe(201);
    return res.body.id as number;
  };
  const head = async (server: OrdinalProcess) =>
    (await http(server.baseUrl, 'GET', '/api/events/head')).body.head as number;
  /** The replica's own rows of `db` (what a reader there could see without the watermark). */
  const visibleOnReplica = async (db: TestDatabase, index: number) =>
    (await replica!.query(db.name, 'SELECT 1 FROM messages WHERE index = $1', [index])).length > 0;

  /** A database on the primary, a primary server on it and a replica reader on its replica. */
  interface Pair {
    db: TestDatabase;
    primary: OrdinalProcess;
    reader: OrdinalProcess;
  }
  const pairs = {} as Record<'concurrent' | 'abandoning' | 'gapless', Pair>;
  const settings = {
    // The gap timeout is far above the tests' holds: a hole is released only by its writer ending.
    concurrent: { ORDINAL_ORDERING: 'concurrent', ORDINAL_GAP_TIMEOUT_MS: '30000' },
    // A primary that gives holes up after 300 ms.
    abandoning: { ORDINAL_ORDERING: 'concurrent', ORDINAL_GAP_TIMEOUT_MS: '300' },
    gapless: {},
  } satisfies Record<keyof typeof pairs, Record<string, string>>;

  // Every server starts here, side by side (a start is seconds of CPU on a busy machine); a
  // database created after the base backup reaches the replica through the WAL like any other.
  beforeAll(async () => {
    const made = startStreamingReplica().then((r) => (replica = r));
    const primaries = await Promise.all(
      (Object.keys(settings) as (keyof typeof settings)[]).map(async (name) => {
        const db = await database();
        return { name, db, primary: await start(db.url, settings[name]) };
      }),
    );
    await made;
    await replica!.caughtUp();
    await Promise.all(
      primaries.map(async ({ name, db, primary }) => {
        const reader = await start(replica!.url(db.name), {
          ...settings[name],
          ORDINAL_ROLE: 'replica-reader',
        });
        pairs[name] = { db, primary, reader };
      }),
    );
  }, 120_000);
  afterAll(async () => {
    for (const c of connections) c.close();
    for (const t of held) await t.rollback().catch(() => undefined);
    for (const s of servers) await s.stop().catch(() => undefined);
    // The replica goes first: its sessions on the test databases would otherwise hold up their drop's replay.
    await replica?.stop();
    for (const d of databases) await d.drop();
  });

  describe('concurrent mode', () => {
    let db: TestDatabase;
    let primary: OrdinalProcess;
    let reader: OrdinalProcess;

    beforeAll(() => {
      ({ db, primary, reader } = pairs.concurrent);
    });

    it('does not pass a hole the primary is still filling; the message after it arrives after it commits, in order', async () => {
      // Given a message seen by the replica reader, and an SSE stream on the replica reader from it
      const first = await publish(primary, 'Before', { n: 0 });
      await waitFor(
        async () => (await head(reader)) >= first,
        10_000,
        'the replica reader to reach the first message',
      );
      const stream = await connect(reader, `/api/events/stream?startIndex=${first}`);
      await stream.waitFor(
        () => stream.indices().includes(first),
        5000,
        'the first message on the replica',
      );

      // And a writer on the primary that drew a position and has not committed (a hole)
      const writer = await HeldTransaction.begin(db.url);
      held.push(writer);
      const hole = await writer.drawPosition('replica-1', 'Held', { n: 1 });
      // When a message above the hole commits on the primary and has replayed on the replica
      const above = await publish(primary, 'Above', { n: 2 });
      expect(above).toBeGreaterThan(hole);
      await replica!.caughtUp();
      expect(await visibleOnReplica(db, above)).toBe(true);

      // Then the replica reader holds at the hole: its watermark says so, its head is below it,
      // and neither a JSON page nor the stream has the message above it
      const status = await waitFor(
        async () => {
          const res = await http(reader.baseUrl, 'GET', '/api/projections');
          return res.body.watermark.heldHole?.from === hole ? res.body.watermark : false;
        },
        10_000,
        `the replica reader to hold at ${hole}`,
      );
      expect(status.position).toBe(hole - 1);
      expect(await head(reader)).toBe(hole - 1);
      const page = await http(reader.baseUrl, 'GET', `/api/events?fromIndex=${first}`);
      expect(page.status).toBe(200);
      expect(page.body.messages.map((m: { id: number }) => m.id)).toEqual([first]);
      expect(page.body.nextIndex).toBe(hole);
      expect(stream.indices()).toEqual([first]);

      // When the held writer commits on the primary
      await writer.commit();
      const committedAt = Date.now();

      // Then the replica reader delivers the held message and then the one above it, once each, within the poll
      await stream.waitFor(
        () => stream.indices().includes(above),
        5000,
        `index ${above} on the replica`,
      );
      expect(stream.indices()).toEqual([first, hole, above]);
      const arrived = stream.arrivedAt(
        stream.events.find((e) => e.event === 'message' && e.data.message.id === above)!,
      );
      // The primary decides nothing here (its writer committed the row): replay plus one poll of the replica.
      expect(arrived - committedAt).toBeLessThan(REPLICA_POLL_MS + 1500);
      expect(await head(reader)).toBeGreaterThanOrEqual(above);
    });

    it('passes a rolled-back hole once the primary has released it (the primary decides, the replica follows)', async () => {
      // Given a hole held by a writer on the primary, with a message above it, both replayed
      const writer = await HeldTransaction.begin(db.url);
      held.push(writer);
      const hole = await writer.drawPosition('replica-2', 'RolledBack', { n: 1 });
      const above = await publish(primary, 'AboveRollback', { n: 2 });
      await replica!.caughtUp();
      await waitFor(
        async () =>
          (await http(reader.baseUrl, 'GET', '/api/projections')).body.watermark.heldHole?.from ===
          hole,
        10_000,
        `the replica reader to hold at ${hole}`,
      );

      // When the writer rolls back: the primary's watermark releases the hole exactly (its writer ended)
      await writer.rollback();

      // Then the replica reader passes it and reaches the message above it
      await waitFor(
        async () => (await head(reader)) >= above,
        10_000,
        `the replica reader to pass the released hole ${hole}`,
      );
      const [record] = await replica!.query<{ released_exactly: boolean }>(
        db.name,
        'SELECT released_exactly FROM log_skipped WHERE position = $1',
        [hole],
      );
      expect(record?.released_exactly).toBe(true);
    });

    it('delivers live messages within the poll (no NOTIFY on a replica)', async () => {
      // Given a live stream on the replica reader at the head
      const start = await head(reader);
      const stream = await connect(reader, `/api/events/stream?startIndex=${start + 1}`);
      await stream.waitFor(
        () => stream.events.some((e) => e.event === 'connected'),
        5000,
        'connected',
      );

      // When 20 messages are published on the primary, one at a time
      const sentAt = new Map<number, number>();
      /** When each row was seen on the replica (its replay; seen a little late at worst, never early). */
      const replayedAt = new Map<number, number>();
      for (let i = 0; i < 20; i++) {
        const id = await publish(primary, 'Live', { i });
        sentAt.set(id, Date.now());
        const replayed = waitFor(
          () => visibleOnReplica(db, id),
          5000,
          `index ${id} replayed on the replica`,
        ).then(() => replayedAt.set(id, Date.now()));
        await stream.waitFor(
          () => stream.indices().includes(id),
          5000,
          `live index ${id} on the replica`,
        );
        await replayed;
        // The scenario's publisher: a random pause, so that publishing does not fall into step with the poll.
        await new Promise((r) => setTimeout(r, Math.random() * REPLICA_POLL_MS));
      }

      // Then each arrived within one poll of its replay (docs/guarantees.md: behind by the
      // replication lag plus up to one ORDINAL_LIVE_POLL_MS), plus the page read and the write
      // of the event, measured per message from its replay (the lag is the replica's, not Ordinal's)
      const live = stream.events.filter(
        (e) => e.event === 'message' && sentAt.has(e.data.message.id),
      );
      expect(live).toHaveLength(20);
      const afterReplay = live.map(
        (e) => stream.arrivedAt(e) - replayedAt.get(e.data.message.id as number)!,
      );
      const latencies = live
        .map((e) => stream.arrivedAt(e) - sentAt.get(e.data.message.id as number)!)
        .sort((a, b) => a - b);
      console.log(
        JSON.stringify({
          replicaLiveDelivery: {
            pollMs: REPLICA_POLL_MS,
            p50Ms: latencies[9],
            maxMs: latencies[19],
            maxAfterReplayMs: Math.max(...afterReplay),
          },
        }),
      );
      expect(afterReplay.filter((ms) => ms > REPLICA_POLL_MS + READ_ALLOWANCE_MS)).toEqual([]);
    });

    it('refuses writes with 421 and a JSON body naming the problem; reads and aggregates load work', async () => {
      // Given a stream written on the primary and replayed
      const created = await http(primary.baseUrl, 'POST', '/api/streams/order-r1/events', {
        expectedVersion: 0,
        events: [{ eventType: 'OrderPlaced', data: { n: 1 } }],
      });
      expect(created.status).toBe(201);
      await replica!.caughtUp();
      await waitFor(
        async () => (await head(reader)) >= created.body.lastIndex,
        10_000,
        'the replica reader to reach the stream',
      );

      // When a client writes to the replica reader, every write path is refused clearly (no 500)
      const single = await http(reader.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Nope',
        content: {},
      });
      const batch = await http(reader.baseUrl, 'POST', '/api/events/messages', {
        messages: [{ messageType: 'Nope', content: {} }],
      });
      const append = await http(reader.baseUrl, 'POST', '/api/streams/order-r1/events', {
        expectedVersion: 1,
        events: [{ eventType: 'OrderPaid', data: {} }],
      });
      const snapshot = await http(reader.baseUrl, 'PUT', '/api/streams/order-r1/snapshot', {
        version: 1,
        state: { n: 1 },
      });
      for (const res of [single, batch, append, snapshot]) {
        expect({ status: res.status, code: res.body.code }).toEqual({
          status: 421,
          code: 'read_only_replica',
        });
        expect(res.body.message).toMatch(/replica reader|read-only/);
      }

      // Then reads work: the stream's events and version, one message by index
      const events = await http(reader.baseUrl, 'GET', '/api/streams/order-r1');
      expect(events.status).toBe(200);
      const version = await http(reader.baseUrl, 'GET', '/api/streams/order-r1/version');
      expect(version.body.version).toBe(1);
      const one = await http(reader.baseUrl, 'GET', `/api/events/${created.body.firstIndex}`);
      expect(one.status).toBe(200);
      const health = await http(reader.baseUrl, 'GET', '/health');
      expect(health.status).toBe(200);
      // And nothing was written on the primary by the refused requests
      const [{ n }] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM messages WHERE message_type = 'Nope'`,
      );
      expect(n).toBe(0);
    });
  });

  describe('concurrent mode, a hole the primary gives up', () => {
    it('passes it after the primary abandons it, and delivers a late arrival inside it as late-message', async () => {
      // Given a primary that abandons holes after 300 ms, and a replica reader with a live stream
      const { db, primary, reader } = pairs.abandoning;
      const from = (await head(reader)) + 1;
      const stream = await connect(reader, `/api/events/stream?startIndex=${from}`);
      await stream.waitFor(
        () => stream.events.some((e) => e.event === 'connected'),
        5000,
        'connected',
      );

      // When a writer on the primary holds a position past the gap timeout, with a message above it
      const writer = await HeldTransaction.begin(db.url);
      held.push(writer);
      const hole = await writer.drawPosition('replica-late', 'Late', { n: 1 });
      const above = await publish(primary, 'AboveAbandoned', { n: 2 });

      // Then the replica reader passes the hole once the primary has abandoned it (recorded, replicated)
      await stream.waitFor(
        () => stream.indices().includes(above),
        10_000,
        `index ${above} past the abandoned hole`,
      );
      expect(stream.indices()).not.toContain(hole);
      const [record] = await replica!.query<{ released_exactly: boolean }>(
        db.name,
        'SELECT released_exactly FROM log_skipped WHERE position = $1',
        [hole],
      );
      expect(record?.released_exactly).toBe(false);

      // And when the writer commits after all, the replica reader's stream gets it as a late arrival
      await writer.commit();
      await stream.waitFor(
        () => stream.events.some((e) => e.event === 'late-message' && e.data.message.id === hole),
        10_000,
        `late arrival ${hole}`,
      );
      expect(stream.indices()).not.toContain(hole);
    });
  });

  describe('gapless mode', () => {
    it('delivers every committed message in index order under parallel writers (replay order is commit order)', async () => {
      // Given a gapless primary and a replica reader on its replica
      const { db, primary, reader } = pairs.gapless;
      const from = (await head(reader)) + 1;
      const stream = await connect(reader, `/api/events/stream?startIndex=${from}`);

      // When 8 clients publish 200 messages in parallel on the primary
      await Promise.all(
        Array.from({ length: 8 }, (_, c) =>
          (async () => {
            for (let i = 0; i < 25; i++) await publish(primary, 'Parallel', { c, i });
          })(),
        ),
      );
      const committed = (
        await db.query<{ index: string }>(
          'SELECT index::text AS index FROM messages WHERE index >= $1 ORDER BY messages.index',
          [from],
        )
      ).map((r) => Number(r.index));
      expect(committed).toHaveLength(200);

      // Then the replica reader's stream has exactly the committed indices, gap-free and in order
      await stream.waitFor(
        () => stream.indices().length >= committed.length,
        10_000,
        'every message on the replica',
      );
      expect(stream.indices()).toEqual(committed);
      expect(committed.at(-1)! - committed[0] + 1).toBe(committed.length);
    });
  });

  describe('start-up', () => {
    it('a primary pointed at the standby refuses to start and says to set ORDINAL_ROLE=replica-reader', async () => {
      const db = await database();
      await replica!.caughtUp();
      const server = spawnServer({
        DATABASE_URL: replica!.url(db.name),
        PORT: '0',
        HOST: '127.0.0.1',
      });
      servers.push(server);
      expect(await server.exited).toBe(1);
      expect(server.output()).toMatch(/read-only standby.*ORDINAL_ROLE=replica-reader/);
    });

    it('a replica reader on a database without the schema refuses to start and says to start a primary first', async () => {
      const db = await database(true);
      await replica!.caughtUp();
      const server = spawnServer({
        DATABASE_URL: replica!.url(db.name),
        PORT: '0',
        HOST: '127.0.0.1',
        ORDINAL_ROLE: 'replica-reader',
      });
      servers.push(server);
      expect(await server.exited).toBe(1);
      expect(server.output()).toMatch(/no Ordinal schema yet.*start a primary instance/);
      // And it wrote nothing: the replica would have refused, and the primary's database is still empty
      const [{ n }] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`,
      );
      expect(n).toBe(0);
    });
  });
});
