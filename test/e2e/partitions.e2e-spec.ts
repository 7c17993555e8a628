import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startEventStoreContext } from '../support/event-store-context.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

const TAKEOVER_MS = 3000;
const PARTITIONS = 8;

/**
 * A projection in 8 partitions (keyed by userId) over three worker processes: every partition
 * owned, a joining process gets a share, a killed one's partitions are taken over, no
 * partition unowned longer than the takeover bound, per-key order kept, nothing applied twice.
 */
describe('a partitioned projection over three processes', () => {
  let db: TestDatabase;
  let writerApp: INestApplicationContext;
  let server: TestServer | undefined;
  const workers: WorkerProcess[] = [];
  const written: number[] = [];
  const env = () => ({
    DATABASE_URL: db.url,
    TAKEOVER_MS: String(TAKEOVER_MS),
    PROJECTION: 'summary',
    PARTITIONS: String(PARTITIONS),
    PARTITION_BY: 'userId',
    BATCH_SIZE: '20',
    HANDLER_DELAY_MS: '1',
  });
  let sampling = false;
  let sampler: Promise<void> | null = null;
  const unownedSince = new Map<string, number>();
  let longestUnownedMs = 0;

  // Each test has its own database, processes and log: none relies on what an earlier one left.
  beforeEach(async () => {
    written.length = 0;
    unownedSince.clear();
    longestUnownedMs = 0;
    db = await createTestDatabase();
    writerApp = await startEventStoreContext(db.url);
    await db.query(
      'CREATE TABLE applied (id bigserial PRIMARY KEY, index bigint NOT NULL, pid integer NOT NULL, key text)',
    );
    await db.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
  });
  afterEach(async () => {
    sampling = false;
    await sampler;
    await Promise.all(workers.splice(0).map((w) => w.stop('SIGKILL')));
    await server?.close();
    server = undefined;
    await writerApp?.close();
    await db?.drop();
  });

  const leases = () =>
    db.query<{ name: string; owner: string | null; live: boolean; acquiredMs: number }>(
      `SELECT name, owner, expires_at > clock_timestamp() AS live,
              extract(epoch FROM acquired_at)::float8 * 1000 AS "acquiredMs"
         FROM consumer_leases WHERE group_name = 'summary' ORDER BY name`,
    );
  /** The database's clock (ms): leases are stamped by it, so a takeover is measured on it. */
  const dbNow = async () =>
    (
      await db.query<{ ms: number }>(
        'SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms',
      )
    )[0].ms;
  type LeaseRow = Awaited<ReturnType<typeof leases>>[number];
  const sharesOf = (rows: LeaseRow[]) => {
    const byPid = new Map<number, number>();
    for (const r of rows)
      if (r.live && r.owner)
        byPid.set(
          Number(r.owner.split(':')[1]),
          (byPid.get(Number(r.owner.split(':')[1])) ?? 0) + 1,
        );
    return { owned: rows.filter((r) => r.live).length, byPid };
  };
  const shares = async () => sharesOf(await leases());
  const balanced = (counts: number[]) => (s: ReturnType<typeof sharesOf>) =>
    s.owned === PARTITIONS && [...s.byPid.values()].sort().join() === counts.join() ? s : null;
  const startSampling = () => {
    sampling = true;
    sampler = (async () => {
      while (sampling) {
        const now = Date.now();
        for (const r of await leases()) {
          if (r.live) {
            const since = unownedSince.get(r.name);
            if (since !== undefined) longestUnownedMs = Math.max(longestUnownedMs, now - since);
            unownedSince.delete(r.name);
          } else if (!unownedSince.has(r.name)) unownedSince.set(r.name, now);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
  };
  const append = async (count: number) => {
    const result = await writerApp.get(LogWriter).append({
      messages: Array.from({ length: count }, (_, n) => ({
        messageType: 'Tick',
        userId: `user-${n % 23}`,
        body: { n },
      })),
    });
    written.push(...result.entries.map((e) => (e as { message: { id: number } }).message.id));
  };
  const caughtUp = () =>
    waitFor(
      async () => {
        const rows = await db.query<{ position: string }>(
          `SELECT position FROM checkpoints WHERE name LIKE 'summary#%'`,
        );
        return rows.length === PARTITIONS &&
          rows.every((r) => Number(r.position) >= Math.max(...written))
          ? true
          : null;
      },
      60_000,
      'every partition to reach the last event',
    );
  const expectAppliedOnceInKeyOrder = async () => {
    const rows = await db.query<{ id: string; index: string; key: string }>(
      'SELECT id, index, key FROM applied ORDER BY id',
    );
    expect(rows.map((r) => Number(r.index)).sort((a, b) => a - b)).toEqual(
      [...written].sort((a, b) => a - b),
    );
    const lastByKey = new Map<string, number>();
    const outOfOrder: string[] = [];
    for (const r of rows) {
      const index = Number(r.index);
      if ((lastByKey.get(r.key) ?? 0) > index)
        outOfOrder.push(`${r.key}: ${index} after ${lastByKey.get(r.key)}`);
      lastByKey.set(r.key, index);
    }
    expect(outOfOrder).toEqual([]);
  };

  it('two processes share the 8 partitions 4 + 4; a third joining gets a share (3 + 3 + 2), none unowned longer than the bound', async () => {
    workers.push(...(await Promise.all([spawnWorker(env()), spawnWorker(env())])));
    await waitFor(async () => balanced([4, 4])(await shares()), 30_000, '4 + 4');
    startSampling();
    await append(200);
    workers.push(await spawnWorker(env()));
    const s = await waitFor(async () => balanced([2, 3, 3])(await shares()), 30_000, '3 + 3 + 2');
    expect([...s.byPid.keys()].sort()).toEqual(workers.map((w) => w.pid).sort());
    await append(200);
    await caughtUp();
    await expectAppliedOnceInKeyOrder();
    expect(longestUnownedMs).toBeLessThan(TAKEOVER_MS);
    // And the server's one view shows the projection with its 8 partitions and their owners
    server = await startServer(db.url);
    const entry = await waitFor(
      async () => {
        const found = (
          await http(server!.baseUrl, 'GET', '/api/projections')
        ).body.projections.find((p: { name: string }) => p.name === 'summary');
        return found?.lag === 0 ? found : null; // the server's StartMarker is passed over too
      },
      20_000,
      'the summary projection at the head',
    );
    expect(entry).toMatchObject({ kind: 'projection', state: 'running', lag: 0, owner: null });
    expect(entry.partitions.map((p: { name: string }) => p.name)).toEqual(
      Array.from({ length: PARTITIONS }, (_, i) => `summary#${i}`),
    );
    expect(new Set(entry.partitions.map((p: { owner: { pid: number } }) => p.owner.pid))).toEqual(
      new Set(workers.map((w) => w.pid)),
    );
  });

  it('kill -9 of one: its partitions are taken over within the bound; nothing lost, per-key order kept', async () => {
    // Given three processes sharing the partitions 3 + 3 + 2, and events streaming in
    workers.push(
      ...(await Promise.all([spawnWorker(env()), spawnWorker(env()), spawnWorker(env())])),
    );
    await waitFor(async () => balanced([2, 3, 3])(await shares()), 30_000, '3 + 3 + 2');
    startSampling();
    const victim = workers[0];
    const streaming = (async () => {
      for (let i = 0; i < 8; i++) await append(50);
    })();
    // When one is killed (the time read just before: the takeover is measured from no later than the death)
    const killedAt = await dbNow();
    // (its partitions read at that moment, those it holds on a live lease: a balance settling
    // just before could still move one, or a lease it let lapse under load be claimed, and
    // such a claim, made before the kill, is no takeover)
    const victimsPartitions = (await leases())
      .filter((l) => l.live && l.owner && Number(l.owner.split(':')[1]) === victim.pid)
      .map((l) => l.name);
    expect(victimsPartitions.length).toBeGreaterThan(0);
    await victim.stop('SIGKILL');
    workers.splice(0, 1);
    // Then the survivors hold 4 + 4
    const after = await waitFor(
      async () => {
        // (one read: the rows judged below are the ones that showed the balance)
        const rows = await leases();
        return balanced([4, 4])(sharesOf(rows)) ? rows : null;
      },
      30_000,
      'the survivors to hold 4 + 4',
    );
    // And each of its partitions was claimed within the bound of its death (on the database's
    // clock, so the test's polling is not in it; by design at most ttl + tick, then the claim)
    const takeovers = after
      .filter((l) => victimsPartitions.includes(l.name))
      .map((l) => Math.round(l.acquiredMs - killedAt));
    expect(takeovers).toHaveLength(victimsPartitions.length);
    expect(takeovers.filter((ms) => ms <= 0 || ms > TAKEOVER_MS)).toEqual([]);
    await streaming;
    await caughtUp();
    sampling = false;
    await sampler;
    await expectAppliedOnceInKeyOrder();
    expect(longestUnownedMs).toBeLessThan(TAKEOVER_MS);
  });
});
