import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, waitFor } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import { startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';
import { HeldTransaction, lastDrawn } from '../support/held-transaction.js';

/**
 * Issue 10: concurrent mode must never miss an acknowledged message. Every case runs through
 * the built server in its own process (apps/eventstore/dist/main.js) with real concurrent
 * PostgreSQL transactions of the test's own (test/support/held-transaction.ts).
 *
 * Hold durations below are the scenario (a slow writer), never synchronisation: every wait
 * for an effect polls with a deadline.
 */
describe('concurrent mode never misses an acknowledged message (issue 10)', () => {
  let db: TestDatabase;
  const extraDatabases: TestDatabase[] = [];
  const servers: OrdinalProcess[] = [];
  const connections: SseConnection[] = [];
  const held: HeldTransaction[] = [];

  const start = async (env: Record<string, string> = {}, port?: number, database: TestDatabase = db) => {
    const server = await startOrdinalProcess(database.url, { ORDINAL_ORDERING: 'concurrent', ...env }, port);
    servers.push(server);
    return server;
  };
  const connect = async (server: OrdinalProcess, path: string, headers: Record<string, string> = {}) => {
    const connection = await SseConnection.open(server.baseUrl, path, { ...DEV_AUTH, ...headers });
    connections.push(connection);
    expect(connection.status).toBe(200);
    return connection;
  };
  const begin = async (database: TestDatabase = db) => {
    const tx = await HeldTransaction.begin(database.url);
    held.push(tx);
    return tx;
  };
  /** Every committed index at or above `from`, from the database itself. */
  const committedFrom = async (from: number, database: TestDatabase = db) =>
    (await database.query<{ index: string }>('SELECT index::text AS index FROM messages WHERE index >= $1 ORDER BY messages.index', [from])).map((r) => Number(r.index));
  const drawn = () => lastDrawn((text) => db.query(text));
  /** Waits until the sequence has handed out a position above `before` (a writer drew it inside its open transaction). */
  const positionDrawnAbove = (before: number) => waitFor(async () => ((await drawn()) > before ? drawn() : false), 10_000, `a position drawn above ${before}`);
  /** One sample of a /metrics figure (the first series of that name), or null when absent. */
  const metric = async (server: OrdinalProcess, name: string): Promise<number | null> => {
    const res = await fetch(`${server.baseUrl}/metrics`);
    const line = (await res.text()).split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
    return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  /**
   * The scenario's "a moment later": gives the idle router (no feed open) the time to hear of
   * `index` (own commit, NOTIFY, poll), up to a bound; it is not an error if it never says so.
   */
  const routerHeardOf = (server: OrdinalProcess, index: number) =>
    waitFor(async () => ((await metric(server, 'ordinal_router_delivered_up_to')) ?? 0) >= index, 800, 'the router to hear of ' + index).catch(() => undefined);
  /** Sleeps for the rest of a deliberate hold (the scenario's slow writer), measured from `since`. */
  const holdUntil = (since: number, ms: number) => new Promise((r) => setTimeout(r, Math.max(0, since + ms - Date.now())));

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const c of connections) c.close();
    for (const t of held) await t.rollback().catch(() => undefined);
    for (const s of servers) await s.stop().catch(() => undefined);
    await db?.drop();
    for (const d of extraDatabases) await d.drop();
  });
  afterEach(async () => {
    for (const c of connections.splice(0)) c.close();
    for (const t of held.splice(0)) await t.rollback().catch(() => undefined);
    for (const s of servers.splice(0)) await s.stop().catch(() => undefined);
  });

  describe('case 1: a reader that joins while a drawn position is held gets everything', () => {
    it('with no stream open, a held stream append (1.5 s, under the gap timeout), a message above it, a client connecting from below: the client receives both', async () => {
      // Given a server in concurrent mode with no SSE stream open, and a stream at version 1
      const server = await start({ ORDINAL_GAP_TIMEOUT_MS: '10000' });
      const created = await http(server.baseUrl, 'POST', '/api/streams/order-c1/events', { expectedVersion: 0, events: [{ eventType: 'OrderPlaced', data: { n: 1 } }] });
      expect(created.status).toBe(201);
      const from = created.body.firstIndex as number;

      // And another writer holding that stream's head row (the append will draw its position, then wait on the row)
      const lock = await begin();
      await lock.lockStreamRow('order-c1');
      const heldSince = Date.now();
      const before = await drawn();
      const append = http(server.baseUrl, 'POST', '/api/streams/order-c1/events', { expectedVersion: 1, events: [{ eventType: 'OrderPaid', data: { n: 2 } }] });
      const heldIndex = await positionDrawnAbove(before);

      // When a message commits above the held position
      const above = await http(server.baseUrl, 'PUT', '/api/events/message', { messageType: 'Above', content: { n: 3 } });
      expect(above.status).toBe(201);
      expect(above.body.id).toBeGreaterThan(heldIndex);
      await routerHeardOf(server, above.body.id);
      // And a client connects from below the held position
      const stream = await connect(server, `/api/events/stream?startIndex=${from}`);
      await stream.waitFor(() => stream.events.some((e) => e.event === 'connected'), 5000, 'connected');

      // And the held append commits after 1.5 s (well under the gap timeout) and is acknowledged
      await holdUntil(heldSince, 1500);
      await lock.commit();
      const appended = await append;
      expect(appended.status).toBe(201);
      expect(appended.body.firstIndex).toBe(heldIndex);

      // Then the client receives both, in index order, once each: every committed index from its start
      await stream
        .waitFor(() => stream.indices().includes(heldIndex) && stream.indices().includes(above.body.id), 6000, `indices ${heldIndex} and ${above.body.id}`)
        .catch(() => undefined);
      expect({ held: stream.indices().includes(heldIndex), above: stream.indices().includes(above.body.id) }).toEqual({ held: true, above: true });
      expect(stream.indices()).toEqual(await committedFrom(from));
    });

    it('after a restart with a drawn position held: a client connecting from below receives the held message, the message above it and the new StartMarker', async () => {
      // Given a server, and an external transaction that drew a position and holds it
      const first = await start({ ORDINAL_GAP_TIMEOUT_MS: '20000' });
      const before = await http(first.baseUrl, 'PUT', '/api/events/message', { messageType: 'Before', content: { n: 0 } });
      expect(before.status).toBe(201);
      const from = before.body.id as number;
      const writer = await begin();
      const heldIndex = await writer.drawPosition('extrestart-1', 'HeldAcrossRestart', { n: 1 });
      const heldSince = Date.now();
      // And a message committed above it
      const above = await http(first.baseUrl, 'PUT', '/api/events/message', { messageType: 'Above', content: { n: 2 } });
      expect(above.status).toBe(201);
      expect(above.body.id).toBeGreaterThan(heldIndex);

      // When the server restarts (no stream open) while the position is still held
      await first.stop();
      servers.splice(servers.indexOf(first), 1);
      const second = await start({ ORDINAL_GAP_TIMEOUT_MS: '20000' }, first.port);
      const [marker] = await db.query<{ index: string }>(`SELECT max(index)::text AS index FROM messages WHERE message_type = 'StartMarker'`);
      expect(Number(marker.index)).toBeGreaterThan(above.body.id);
      await routerHeardOf(second, Number(marker.index));
      // And a client connects from below the held position
      const stream = await connect(second, `/api/events/stream?startIndex=${from}`);
      await stream.waitFor(() => stream.events.some((e) => e.event === 'connected'), 5000, 'connected');
      // And the held writer commits (1.5 s after drawing; far under the gap timeout)
      await holdUntil(heldSince, 1500);
      await writer.commit();

      // Then the client receives the held message, the one above and the new StartMarker, in order, once each
      const expected = await committedFrom(from);
      expect(expected).toEqual(expect.arrayContaining([heldIndex, above.body.id, Number(marker.index)]));
      await stream.waitFor(() => stream.indices().length >= expected.length, 6000, `${expected.length} messages`).catch(() => undefined);
      expect(stream.indices()).toEqual(expected);
    });
  });
});
