import { rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { ownershipTimings } from '@ordinal/ownership';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startEventStoreContext } from '../support/event-store-context.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

/**
 * The server lists, waits for, rebuilds and replays the parked messages of a projection that
 * runs in two other processes (a user's service), and reports it in /health once it is stuck.
 */
/** The takeover bound of the workers and the server. */
const TAKEOVER_MS = 2500;

describe('one view of every consumer on the database (the server and two worker processes)', () => {
  let db: TestDatabase;
  let writerApp: INestApplicationContext;
  let server: TestServer;
  const workers: WorkerProcess[] = [];
  const poison = join(mkdtempSync(join(tmpdir(), 'ordinal-poison-')), 'poison');
  let last = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    writerApp = await startEventStoreContext(db.url);
    await db.query('CREATE TABLE applied (index bigint NOT NULL, pid integer NOT NULL, key text)');
    await db.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
    writeFileSync(poison, 'broken');
    const env = {
      DATABASE_URL: db.url,
      TAKEOVER_MS: String(TAKEOVER_MS),
      ON_ERROR: 'park',
      POISON_FILE: poison,
    };
    workers.push(...(await Promise.all([spawnWorker(env), spawnWorker(env)])));
    server = await startServer(db.url, {
      ORDINAL_STUCK_AFTER_MS: '1500',
      ORDINAL_TAKEOVER_MS: String(TAKEOVER_MS),
    });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await server?.close();
    await writerApp?.close();
    await db?.drop();
    rmSync(poison, { force: true });
  });

  const append = async (bodies: object[]) => {
    const result = await writerApp
      .get(LogWriter)
      .append({ messages: bodies.map((body) => ({ messageType: 'Tick', userId: 'u', body })) });
    last = Math.max(...result.entries.map((e) => (e as { message: { id: number } }).message.id));
    return last;
  };
  const counter = async () =>
    (await http(server.baseUrl, 'GET', '/api/projections')).body.projections.find(
      (p: { name: string }) => p.name === 'counter',
    );

  it('lists the projection another process runs, with its owner, heartbeat, position, lag and parked messages; ?atLeast waits for it', async () => {
    // Given events, one of them poison (parked after one retry)
    await append([{ n: 1 }, { n: 2, poison: true }, { n: 3 }]);
    // When the server is asked to wait for the last one
    const waited = await http(
      server.baseUrl,
      'GET',
      `/api/projections/counter?atLeast=${last}&timeoutMs=20000`,
    );
    // Then it answers once the worker applied it, and shows who runs it
    expect(waited.status).toBe(200);
    expect(waited.body.reached).toBe(true);
    const entry = await waitFor(
      async () => {
        const c = await counter();
        return c?.parked === 1 ? c : null;
      },
      20_000,
      'the parked message in the report',
    );
    expect(entry).toMatchObject({
      kind: 'projection',
      stream: 'types:Tick',
      state: 'running',
      position: last,
      lag: 0,
      local: false,
    });
    expect(workers.map((w) => w.pid)).toContain(entry.owner.pid);
    expect(entry.owner).toMatchObject({
      host: expect.any(String),
      heartbeatAgeMs: expect.any(Number),
      self: false,
    });
    // (an owner is listed only while its lease is live, and a renewal sets the lease to expire
    // ttl after the heartbeat: the age is under ttl whatever the load)
    expect(entry.owner.heartbeatAgeMs).toBeLessThanOrEqual(ownershipTimings(TAKEOVER_MS).ttlMs);
    const parked = (await http(server.baseUrl, 'GET', '/api/projections/counter/parked')).body
      .parked;
    expect(parked).toMatchObject([
      { consumer: 'counter', position: last - 1, messageType: 'Tick' },
    ]);
    expect(parked[0].error).toContain(`poison at ${last - 1}`);
  });

  it('replays parked messages and rebuilds through the process that owns the projection', async () => {
    // When the handler is fixed and the server is asked to replay the parked message
    rmSync(poison);
    const replay = await http(server.baseUrl, 'POST', '/api/projections/counter/parked/replay');
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ name: 'counter', replayed: 1, remaining: 0, error: null });
    expect((await counter()).parked).toBe(0);
    const rows = async () =>
      (await db.query<{ index: string }>('SELECT index FROM applied ORDER BY index')).map((r) =>
        Number(r.index),
      );
    expect(await rows()).toEqual([last - 2, last - 1, last]);
    // (The first event's side effect ran once per attempt of its batch: the batch with the poison rolled back twice.)
    const effects = async () =>
      (
        await db.query<{ index: string; n: string }>(
          'SELECT index, count(*) AS n FROM side_effects GROUP BY index ORDER BY index',
        )
      ).map((e) => [Number(e.index), Number(e.n)]);
    const before = await effects();
    expect(before).toEqual([
      [last - 2, 3],
      [last - 1, 1],
      [last, 1],
    ]);
    // When it is rebuilt from the server, the owner clears its read model and replays it (as replay: no side effects again)
    const rebuilt = await http(server.baseUrl, 'POST', '/api/projections/counter/rebuild');
    expect(rebuilt.status).toBe(202);
    await waitFor(
      async () =>
        (
          await http(
            server.baseUrl,
            'GET',
            `/api/projections/counter?atLeast=${last}&timeoutMs=5000`,
          )
        ).body.reached || null,
      20_000,
      'the rebuild to replay',
    );
    expect(await rows()).toEqual([last - 2, last - 1, last]);
    expect(await effects()).toEqual(before);
  });

  it('/health reports a projection that is behind and not moving (nobody can run it), and recovers', async () => {
    // Given both workers frozen (their leases run out) while events keep arriving
    for (const w of workers) w.child.kill('SIGSTOP');
    try {
      await append([{ n: 4 }]);
      // Then /health degrades, naming the stuck projection
      const health = await waitFor(
        async () => {
          const h = await http(server.baseUrl, 'GET', '/health', undefined, {});
          return h.body.status === 'degraded' ? h : null;
        },
        20_000,
        'the stuck projection in /health',
      );
      expect(health.status).toBe(200);
      expect(health.body.projections.status).toBe('down');
      expect(health.body.projections.stuck).toMatchObject([{ name: 'counter', lag: 1 }]);
      // And once no live process owns it, operations say so instead of waiting
      await waitFor(
        async () => (await counter()).state === 'unowned' || null,
        20_000,
        'the projection unowned',
      );
      expect((await http(server.baseUrl, 'POST', '/api/projections/counter/rebuild')).status).toBe(
        409,
      );
      expect((await http(server.baseUrl, 'POST', '/api/projections/nope/rebuild')).status).toBe(
        404,
      );
    } finally {
      for (const w of workers) w.child.kill('SIGCONT');
    }
    // When the workers run again, it catches up and /health is ok
    await waitFor(
      async () =>
        (await http(server.baseUrl, 'GET', '/health', undefined, {})).body.status === 'ok' || null,
      30_000,
      'health to recover',
    );
  });
});
