import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, waitFor } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import { startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';
import { HeldTransaction, lastDrawn, sessionsBlockedBy } from '../support/held-transaction.js';
import {
  brokerUrl,
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '../support/amqp-broker.js';
import { startProjectionsApp } from '../support/projections-app.js';
import { SubscriptionsService } from '@ordinal/subscriptions';
import type { INestApplicationContext } from '@nestjs/common';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  const collectors: Collector[] = [];
  const apps: INestApplicationContext[] = [];
  let broker: TestBroker | null = null;
  const configDir = mkdtempSync(join(tmpdir(), 'ordinal-c10-'));

  const start = async (
    env: Record<string, string> = {},
    port?: number,
    database: TestDatabase = db,
  ) => {
    const server = await startOrdinalProcess(
      database.url,
      { ORDINAL_ORDERING: 'concurrent', ...env },
      port,
    );
    servers.push(server);
    return server;
  };
  const connect = async (
    server: OrdinalProcess,
    path: string,
    headers: Record<string, string> = {},
  ) => {
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
    (
      await database.query<{ index: string }>(
        'SELECT index::text AS index FROM messages WHERE index >= $1 ORDER BY messages.index',
        [from],
      )
    ).map((r) => Number(r.index));
  const drawn = () => lastDrawn((text) => db.query(text));
  /** Waits until the sequence has handed out a position above `before` (a writer drew it inside its open transaction). */
  const positionDrawnAbove = (before: number) =>
    waitFor(
      async () => ((await drawn()) > before ? drawn() : false),
      10_000,
      `a position drawn above ${before}`,
    );
  /** One sample of a /metrics figure (the first series of that name), or null when absent. */
  const metric = async (server: OrdinalProcess, name: string): Promise<number | null> => {
    const res = await fetch(`${server.baseUrl}/metrics`);
    const line = (await res.text())
      .split('\n')
      .find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
    return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  /**
   * The scenario's precondition "the server has seen a commit above the held position, and
   * holds": its watermark has held a hole (its router asked it to pass a commit above one).
   * The router cannot report the commit itself: it must not pass the hole. Failing, not
   * waiting on, when that does not happen within the deadline: the case would test nothing.
   */
  const watermarkHolds = (server: OrdinalProcess) =>
    waitFor(
      async () => ((await metric(server, 'ordinal_watermark_holes_held_total')) ?? 0) >= 1,
      10_000,
      'the watermark to hold the hole below a commit',
    );
  /** Sleeps for the rest of a deliberate hold (the scenario's slow writer), measured from `since`. */
  const holdUntil = (since: number, ms: number) =>
    new Promise((r) => setTimeout(r, Math.max(0, since + ms - Date.now())));

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const c of connections) c.close();
    for (const t of held) await t.rollback().catch(() => undefined);
    for (const c of collectors) await c.stop();
    for (const a of apps) await a.close().catch(() => undefined);
    for (const s of servers) await s.stop().catch(() => undefined);
    await broker?.close();
    await db?.drop();
    for (const d of extraDatabases) await d.drop();
    rmSync(configDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const c of connections.splice(0)) c.close();
    for (const t of held.splice(0)) await t.rollback().catch(() => undefined);
    for (const c of collectors.splice(0)) await c.stop();
    for (const a of apps.splice(0)) await a.close().catch(() => undefined);
    for (const s of servers.splice(0)) await s.stop().catch(() => undefined);
  });

  describe('case 1: a reader that joins while a drawn position is held gets everything', () => {
    it('with no stream open, a held stream append (1.5 s, under the gap timeout), a message above it, a client connecting from below: the client receives both', async () => {
      // Given a server in concurrent mode with no SSE stream open, and a stream at version 1
      const server = await start({ ORDINAL_GAP_TIMEOUT_MS: '10000' });
      const created = await http(server.baseUrl, 'POST', '/api/streams/order-c1/events', {
        expectedVersion: 0,
        events: [{ eventType: 'OrderPlaced', data: { n: 1 } }],
      });
      expect(created.status).toBe(201);
      const from = created.body.firstIndex as number;

      // And another writer holding that stream's head row (the append will draw its position, then wait on the row)
      const lock = await begin();
      await lock.lockStreamRow('order-c1');
      const heldSince = Date.now();
      const before = await drawn();
      const append = http(server.baseUrl, 'POST', '/api/streams/order-c1/events', {
        expectedVersion: 1,
        events: [{ eventType: 'OrderPaid', data: { n: 2 } }],
      });
      const heldIndex = await positionDrawnAbove(before);

      // When a message commits above the held position
      const above = await http(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Above',
        content: { n: 3 },
      });
      expect(above.status).toBe(201);
      expect(above.body.id).toBeGreaterThan(heldIndex);
      await watermarkHolds(server);
      expect((await metric(server, 'ordinal_router_delivered_up_to')) ?? 0).toBeLessThan(heldIndex);
      // And a client connects from below the held position
      const stream = await connect(server, `/api/events/stream?startIndex=${from}`);
      await stream.waitFor(
        () => stream.events.some((e) => e.event === 'connected'),
        5000,
        'connected',
      );

      // And the held append commits after 1.5 s (well under the gap timeout) and is acknowledged
      await holdUntil(heldSince, 1500);
      await lock.commit();
      const appended = await append;
      expect(appended.status).toBe(201);
      expect(appended.body.firstIndex).toBe(heldIndex);

      // Then the client receives both, in index order, once each: every committed index from its start
      await stream
        .waitFor(
          () => stream.indices().includes(heldIndex) && stream.indices().includes(above.body.id),
          6000,
          `indices ${heldIndex} and ${above.body.id}`,
        )
        .catch(() => undefined);
      expect({
        held: stream.indices().includes(heldIndex),
        above: stream.indices().includes(above.body.id),
      }).toEqual({ held: true, above: true });
      expect(stream.indices()).toEqual(await committedFrom(from));
    });

    it('after a restart with a drawn position held: a client connecting from below receives the held message, the message above it and the new StartMarker', async () => {
      // Given a server, and an external transaction that drew a position and holds it
      const first = await start({ ORDINAL_GAP_TIMEOUT_MS: '20000' });
      const before = await http(first.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Before',
        content: { n: 0 },
      });
      expect(before.status).toBe(201);
      const from = before.body.id as number;
      const writer = await begin();
      const heldIndex = await writer.drawPosition('extrestart-1', 'HeldAcrossRestart', { n: 1 });
      const heldSince = Date.now();
      // And a message committed above it
      const above = await http(first.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Above',
        content: { n: 2 },
      });
      expect(above.status).toBe(201);
      expect(above.body.id).toBeGreaterThan(heldIndex);

      // When the server restarts (no stream open) while the position is still held
      await first.stop();
      servers.splice(servers.indexOf(first), 1);
      const second = await start({ ORDINAL_GAP_TIMEOUT_MS: '20000' }, first.port);
      const [marker] = await db.query<{ index: string }>(
        `SELECT max(index)::text AS index FROM messages WHERE message_type = 'StartMarker'`,
      );
      expect(Number(marker.index)).toBeGreaterThan(above.body.id);
      await watermarkHolds(second);
      expect((await metric(second, 'ordinal_router_delivered_up_to')) ?? 0).toBeLessThan(heldIndex);
      // And a client connects from below the held position
      const stream = await connect(second, `/api/events/stream?startIndex=${from}`);
      await stream.waitFor(
        () => stream.events.some((e) => e.event === 'connected'),
        5000,
        'connected',
      );
      // And the held writer commits (1.5 s after drawing; far under the gap timeout)
      await holdUntil(heldSince, 1500);
      await writer.commit();

      // Then the client receives the held message, the one above and the new StartMarker, in order, once each
      const expected = await committedFrom(from);
      expect(expected).toEqual(
        expect.arrayContaining([heldIndex, above.body.id, Number(marker.index)]),
      );
      await stream
        .waitFor(
          () => stream.indices().length >= expected.length,
          6000,
          `${expected.length} messages`,
        )
        .catch(() => undefined);
      expect(stream.indices()).toEqual(expected);
    });
  });

  describe('case 2: a write that commits after its hole was abandoned reaches every reader that passed it, marked late', () => {
    it('SSE: a `late-message` event (same data as `message`, no `id:`); a replayable and a realtime interface: header `late: true`; a subscription: ctx.isLate; /metrics counts it', async () => {
      // Given a server with a 1 s gap timeout, a replayable and a realtime interface, a consumer of each sink, a subscription elsewhere
      broker ??= await connectTestBroker();
      const name = uniqueName('c10-late');
      const realtime = `${name}-rt`;
      const configFile = join(configDir, `${name}.json`);
      writeFileSync(
        configFile,
        JSON.stringify({
          interfaces: [
            { name, type: 'replayable' },
            { name: realtime, type: 'realtime' },
          ],
        }),
      );
      const server = await start({
        ORDINAL_GAP_TIMEOUT_MS: '1000',
        AMQP_URL: brokerUrl(),
        ORDINAL_INTERFACES: configFile,
        ORDINAL_AMQP_INPUT_QUEUE: 'off',
        ORDINAL_AMQP_CONNECTION_NAME: name,
      });
      const deliveries: { index: number; late: unknown }[] = [];
      collectors.push(
        await collect(broker, `${name}.sink`, (msg, channel) => {
          deliveries.push({
            index: Number(msg.properties.headers?.index),
            late: msg.properties.headers?.late,
          });
          channel.ack(msg);
        }),
      );
      const realtimeDeliveries: { index: number; late: unknown }[] = [];
      collectors.push(
        await collect(broker, `${realtime}.sink`, (msg, channel) => {
          realtimeDeliveries.push({
            index: Number(msg.properties.headers?.index),
            late: msg.properties.headers?.late,
          });
          channel.ack(msg);
        }),
      );
      // (the realtime interface publishes only what commits while it runs: it must be live first)
      await waitFor(
        async () =>
          (await http(server.baseUrl, 'GET', '/api/interfaces')).body.interfaces.some(
            (i: { name: string; state: string }) => i.name === realtime && i.state === 'live',
          ),
        30_000,
        'the realtime interface to be live',
      );
      // (its watermark never claims late arrivals itself: the durable claim is once per database, and the server's must count this one)
      const app = await startProjectionsApp(db.url, {
        log: { ordering: 'concurrent', gapTimeoutMs: 1000, lateRescanMs: 3_600_000 },
        subscriptions: { lateCheckMs: 200 },
      });
      apps.push(app);
      const applied: { index: number; isLate: boolean }[] = [];
      app.get(SubscriptionsService).subscribe({
        name: 'c10-late-audit',
        stream: '$all',
        handle: (_m, ctx) => void applied.push({ index: ctx.index, isLate: ctx.isLate }),
      });
      const created = await http(server.baseUrl, 'POST', '/api/streams/order-c2/events', {
        expectedVersion: 0,
        events: [{ eventType: 'OrderPlaced', data: { n: 1 } }],
      });
      expect(created.status).toBe(201);
      const from = created.body.firstIndex as number;
      // And an SSE reader connected from the stream's first event
      const stream = await connect(server, `/api/events/stream?startIndex=${from}`);
      await stream.waitFor(() => stream.indices().includes(from), 5000, 'the first event');

      // When a stream append draws its position and is held (row lock) past the gap timeout
      const lock = await begin();
      await lock.lockStreamRow('order-c2');
      const before = await drawn();
      const append = http(server.baseUrl, 'POST', '/api/streams/order-c2/events', {
        expectedVersion: 1,
        events: [{ eventType: 'OrderPaid', data: { n: 2 } }],
      });
      const heldIndex = await positionDrawnAbove(before);
      // And a message above it commits, which the reader receives once the hole is abandoned (it passed the held position)
      const above = await http(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Above',
        content: { n: 3 },
      });
      expect(above.status).toBe(201);
      await stream.waitFor(
        () => stream.indices().includes(above.body.id),
        8000,
        `the message above the hole (${above.body.id})`,
      );
      expect(
        await db.query('SELECT 1 FROM log_skipped WHERE position = $1', [heldIndex]),
      ).toHaveLength(1);
      expect(stream.indices()).not.toContain(heldIndex);
      // And then the held append commits and is acknowledged
      await lock.commit();
      const appended = await append;
      expect(appended.status).toBe(201);
      expect(appended.body.firstIndex).toBe(heldIndex);

      // Then, once everything had the time to arrive (one deadline for all):
      const lateEvents = () => stream.events.filter((e) => e.event === 'late-message');
      const metricNow = async () =>
        (await metric(server, 'ordinal_watermark_late_arrivals_total')) ?? 0;
      const interfaceLate = async (iface: string) =>
        (await fetch(`${server.baseUrl}/metrics`).then((r) => r.text()))
          .split('\n')
          .filter((l) => l.startsWith(`ordinal_interface_late_total{interface="${iface}"}`))
          .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
      await waitFor(
        async () =>
          (await metricNow()) >= 1 &&
          applied.some((a) => a.index === heldIndex) &&
          deliveries.some((d) => d.index === heldIndex) &&
          realtimeDeliveries.some((d) => d.index === heldIndex) &&
          lateEvents().length > 0,
        8000,
        'the late arrival to reach every reader',
      ).catch(() => undefined);
      const stored = await http(server.baseUrl, 'GET', `/api/events/${heldIndex}`);
      const late = lateEvents();
      expect({
        // /metrics counts it
        lateArrivalsMetricAtLeastOne: (await metricNow()) >= 1,
        // the subscription applied it once, with ctx.isLate
        subscription: applied.filter((a) => a.index === heldIndex),
        // the replayable interface published it once, with the header late: true
        interface: deliveries.filter((d) => d.index === heldIndex),
        // so did the realtime interface, which had published the message above it
        realtime: realtimeDeliveries.filter((d) => d.index === heldIndex),
        realtimeHadAbove: realtimeDeliveries.some((d) => d.index === above.body.id),
        // and each interface counts it in ordinal_interface_late_total
        interfaceLateTotal: [await interfaceLate(name), await interfaceLate(realtime)],
        // the SSE reader received it once as `late-message` (the data a `message` event has), without an `id:` line
        sseLateIndices: late.map((e) => e.data?.message?.id),
        sseLateWithoutId: late.map((e) => e.id === undefined),
        sseLateData: late.map((e) => e.data),
        // and never as a second, out-of-order `message`
        sseMessagesInOrder: stream.indices().every((i, k, all) => k === 0 || i > all[k - 1]),
        sseMessagesWithoutIt: !stream.indices().includes(heldIndex),
      }).toEqual({
        lateArrivalsMetricAtLeastOne: true,
        subscription: [{ index: heldIndex, isLate: true }],
        interface: [{ index: heldIndex, late: true }],
        realtime: [{ index: heldIndex, late: true }],
        realtimeHadAbove: true,
        interfaceLateTotal: [[1], [1]],
        sseLateIndices: [heldIndex],
        sseLateWithoutId: [true],
        sseLateData: [{ message: stored.body }],
        sseMessagesInOrder: true,
        sseMessagesWithoutIt: true,
      });
    });
  });

  describe('case 3: the head never goes backwards', () => {
    it('with a transaction holding a drawn position across a restart (and old holes below it), GET /api/events/head and connected.headIndex never decrease', async () => {
      // Given a log with two old holes (rolled-back writers) and messages between them
      const env = { ORDINAL_GAP_TIMEOUT_MS: '1500' };
      let server = await start(env);
      const put = async (n: number) => {
        const res = await http(server.baseUrl, 'PUT', '/api/events/message', {
          messageType: 'Filler',
          content: { n },
        });
        expect(res.status).toBe(201);
        return res.body.id as number;
      };
      for (const hole of [1, 2]) {
        const tx = await begin();
        await tx.drawPosition(`extold${hole}-1`, 'RolledBack', { hole });
        await tx.rollback();
        await put(hole * 10);
        await put(hole * 10 + 1);
      }
      // And a transaction that draws a position and holds it until the end of the test
      const writer = await begin();
      const heldIndex = await writer.drawPosition('extlong-1', 'HeldLong', { n: 1 });
      let top = 0;
      for (let n = 0; n < 3; n++) top = await put(100 + n);
      expect(top).toBeGreaterThan(heldIndex);

      const samples: { at: string; head: number }[] = [];
      const sample = async (at: string) => {
        const res = await http(server.baseUrl, 'GET', '/api/events/head');
        if (res.status === 200) samples.push({ at: `${at} GET /head`, head: res.body.head });
        const sse = await SseConnection.open(
          server.baseUrl,
          '/api/events/stream?startIndex=1000000000',
          DEV_AUTH,
        );
        try {
          await sse.waitFor(
            () => sse.events.some((e) => e.event === 'connected'),
            5000,
            'connected',
          );
          samples.push({
            at: `${at} connected.headIndex`,
            head: sse.events.find((e) => e.event === 'connected')!.data.headIndex,
          });
        } finally {
          sse.close();
        }
      };
      // When the held position has been abandoned (the head passed it) and the server restarts
      await waitFor(
        async () => (await http(server.baseUrl, 'GET', '/api/events/head')).body.head >= top,
        10_000,
        `the head to reach ${top}`,
      );
      const deadline1 = Date.now() + 1000;
      while (Date.now() < deadline1) await sample('before restart');
      const headBefore = Math.max(...samples.map((s) => s.head));
      await server.stop();
      servers.splice(servers.indexOf(server), 1);
      server = await start(env, server.port);
      // Then, sampled for longer than it takes to abandon both old holes again, the head never moves backwards
      const deadline2 = Date.now() + 6000;
      while (Date.now() < deadline2) await sample('after restart');
      await writer.rollback();
      const backwards = samples.filter(
        (s, k) => k > 0 && s.head < Math.max(...samples.slice(0, k).map((p) => p.head)),
      );
      expect({ headBefore, backwards: backwards.slice(0, 5) }).toEqual({
        headBefore,
        backwards: [],
      });
      expect(
        Math.min(...samples.filter((s) => s.at.startsWith('after')).map((s) => s.head)),
      ).toBeGreaterThanOrEqual(headBefore);
    });
  });

  describe('case 4 (gapless mode): a write waiting longer than the query timeout answers 503 (outcomeUnknown once the commit was sent), never 500', () => {
    // The one-statement flush sends its commit with the statement: the server cannot know the
    // outcome, and the row is stored once the lock is free. The checked flush times out before
    // COMMIT: the server drops that connection, so nothing can commit, and it says so.
    it.each([
      [
        'a single message (the one-statement flush)',
        (base: string) =>
          http(base, 'PUT', '/api/events/message', { messageType: 'Waiting', content: { n: 1 } }),
        1,
        true,
      ],
      [
        'a stream append at any version (the checked flush: it reads the version first)',
        (base: string) =>
          http(base, 'POST', '/api/streams/order-c4any/events', {
            expectedVersion: 'any',
            events: [{ eventType: 'OrderPlaced', data: { n: 2 } }],
          }),
        2,
        false,
      ],
      [
        'a message with an idempotency key (one statement: the key is checked in it)',
        (base: string) =>
          http(base, 'PUT', '/api/events/message', {
            messageType: 'Waiting',
            content: { n: 4 },
            idempotencyKey: 'c4-key',
          }),
        4,
        true,
      ],
      [
        'a stream append',
        (base: string) =>
          http(base, 'POST', '/api/streams/order-c4/events', {
            expectedVersion: 0,
            events: [{ eventType: 'OrderPlaced', data: { n: 3 } }],
          }),
        3,
        true,
      ],
    ] as const)('%s', async (_name, write, n, outcomeUnknown) => {
      // Given a gapless server whose queries time out after 2 s, and another session holding the log lock
      const gapless = extraDatabases[0] ?? (await createTestDatabase());
      if (!extraDatabases.includes(gapless)) extraDatabases.push(gapless);
      const server = await start(
        { ORDINAL_ORDERING: 'gapless', ORDINAL_QUERY_TIMEOUT_MS: '2000' },
        undefined,
        gapless,
      );
      const lock = await begin(gapless);
      await lock.lockLog();
      const lockPid = await lock.pid();
      const since = Date.now();
      // When a write waits for the lock longer than the query timeout
      let answer: Awaited<ReturnType<typeof http>> | null = null;
      const pendingWrite = write(server.baseUrl).then((res) => (answer = res));
      await waitFor(
        async () => (await sessionsBlockedBy((t, v) => gapless.query(t, v), lockPid)) > 0,
        5000,
        'the write to wait for the log lock',
      );
      // (the lock is held until the server answers, or for 8 s past the query timeout at most)
      await waitFor(() => answer !== null, 10_000, 'an answer while the lock is held').catch(
        () => undefined,
      );
      const answeredWhileHeld = answer !== null;
      const heldMs = Date.now() - since;
      await lock.commit();
      const res = await pendingWrite;

      // Then it answered 503 with Retry-After while the lock was still held, never a 500, and says whether the outcome is unknown
      expect({
        status: res.status,
        outcomeUnknown: res.body?.outcomeUnknown ?? false,
        retryAfter: res.headers.get('retry-after') !== null,
        answeredWhileHeld,
      }).toEqual({ status: 503, outcomeUnknown, retryAfter: true, answeredWhileHeld: true });
      expect(heldMs).toBeLessThan(8000);
      // And what it said holds: once the lock is free, the write the server gave up on either lands (unknown) or never does
      const stored = async () =>
        Number(
          (
            await gapless.query<{ c: string }>(
              `SELECT count(*) AS c FROM messages WHERE (body->>'n')::int = $1`,
              [n],
            )
          )[0].c,
        );
      const settled = async () =>
        (
          await gapless.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).length === 0;
      if (outcomeUnknown)
        await waitFor(
          async () => (await stored()) === 1,
          10_000,
          'the write whose outcome was unknown to land',
        );
      else {
        await waitFor(settled, 10_000, 'the abandoned write to end');
        expect(await stored()).toBe(0);
      }
    });
  });
});
