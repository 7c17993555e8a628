import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { ownershipTimings } from '@ordinal/ownership';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startEventStoreContext } from '../support/event-store-context.js';
import { waitFor } from '../support/test-server.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

const TAKEOVER_MS = 4000;
/**
 * The design's worst case for a takeover after the owner dies (libs/ownership/src/ownership-options.ts):
 * its last renewal is at most `ttlMs` before its lease expires, a peer's next tick at most
 * `tickMs` after that, then the claim. The bound leaves the last tick for the claim.
 */
const { ttlMs, tickMs } = ownershipTimings(TAKEOVER_MS);
const WORST_BEFORE_CLAIM_MS = ttlMs + tickMs;

/**
 * Three processes of a user's service with the same projection on one database (real
 * processes, real PostgreSQL): one runs it, the others stand by; kill -9 and SIGSTOP of the
 * owner. The handler writes its read model in the batch's transaction and a live side effect
 * outside it, on a connection of its own.
 */
describe('one owner per projection across processes (kill -9, SIGSTOP)', () => {
  let db: TestDatabase;
  let writerApp: INestApplicationContext;
  const workers: WorkerProcess[] = [];
  const written: number[] = [];

  // Each test has its own database, processes and log: none relies on what an earlier one left.
  beforeEach(async () => {
    written.length = 0;
    db = await createTestDatabase();
    writerApp = await startEventStoreContext(db.url);
    await db.query('CREATE TABLE applied (index bigint NOT NULL, pid integer NOT NULL, key text)');
    await db.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
    const env = {
      DATABASE_URL: db.url,
      TAKEOVER_MS: String(TAKEOVER_MS),
      BATCH_SIZE: '20',
      HANDLER_DELAY_MS: '3',
    };
    workers.push(...(await Promise.all([spawnWorker(env), spawnWorker(env), spawnWorker(env)])));
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop('SIGKILL')));
    await writerApp?.close();
    await db?.drop();
  });

  const append = async (count: number) => {
    const result = await writerApp.get(LogWriter).append({
      messages: Array.from({ length: count }, (_, n) => ({
        messageType: 'Tick',
        userId: `user-${n % 7}`,
        body: { n },
      })),
    });
    const ids = result.entries.map((e) => (e as { message: { id: number } }).message.id);
    written.push(...ids);
    return ids;
  };
  const position = async () =>
    Number(
      (
        await db.query<{ position: string }>(
          `SELECT position FROM checkpoints WHERE name = 'counter'`,
        )
      )[0]?.position ?? 0,
    );
  const caughtUp = () =>
    waitFor(
      async () => (await position()) >= Math.max(...written),
      60_000,
      'the projection to apply everything written',
    );
  const lease = async () =>
    (
      await db.query<{ owner: string | null; epoch: string; live: boolean; acquiredMs: number }>(
        `SELECT owner, epoch, expires_at > clock_timestamp() AS live,
                extract(epoch FROM acquired_at)::float8 * 1000 AS "acquiredMs"
           FROM consumer_leases WHERE name = 'counter'`,
      )
    )[0];
  /** The database's clock (ms): leases are stamped by it, so a takeover is measured on it. */
  const dbNow = async () =>
    (
      await db.query<{ ms: number }>(
        'SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms',
      )
    )[0].ms;
  const ownerPid = (owner: string) => Number(owner.split(':')[1]);
  const ownerWorker = async () => {
    const row = await waitFor(
      async () => {
        const l = await lease();
        return l?.owner && l.live ? l : null;
      },
      30_000,
      'an owner',
    );
    return workers.find((w) => w.pid === ownerPid(row.owner!))!;
  };
  const counts = async (table: 'applied' | 'side_effects') =>
    db.query<{ index: string; n: string }>(
      `SELECT index, count(*) AS n FROM ${table} GROUP BY index ORDER BY index`,
    );
  const expectEachOnce = async (table: 'applied' | 'side_effects') => {
    const rows = await counts(table);
    expect(rows.filter((r) => r.n !== '1')).toEqual([]);
    expect(rows.map((r) => Number(r.index))).toEqual([...written].sort((a, b) => a - b));
  };

  it('three processes: the read model equals a single-process replay and every live side effect ran once', async () => {
    // Given three processes with the same projection
    const owner = await ownerWorker();
    // When 300 events arrive in several appends
    for (let i = 0; i < 6; i++) await append(50);
    await caughtUp();
    // Then each event was applied once, by the one owner, and its side effect ran once
    await expectEachOnce('applied');
    await expectEachOnce('side_effects');
    const pids = await db.query<{ pid: number }>('SELECT DISTINCT pid FROM applied');
    expect(pids.map((p) => p.pid)).toEqual([owner.pid]);
  });

  it('kill -9 of the owner mid-stream: another process takes over within the bound; nothing lost, the read model is right', async () => {
    // Given the owner busy with a stream of events
    const owner = await ownerWorker();
    const before = await lease();
    const streaming = (async () => {
      for (let i = 0; i < 10; i++) await append(30);
    })();
    const applied = async () =>
      Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM applied'))[0].n);
    const base = await applied();
    await waitFor(async () => (await applied()) > base, 30_000, 'the owner to be mid-stream');
    // When it is killed (the time read just before: the takeover is measured from no later than the death)
    const killedAt = await dbNow();
    await owner.stop('SIGKILL');
    workers.splice(workers.indexOf(owner), 1);
    // Then another process holds the lease within the takeover bound
    const taken = await waitFor(
      async () => {
        const l = await lease();
        return l?.owner && l.live && l.epoch !== before.epoch ? l : null;
      },
      30_000,
      'a new owner',
    );
    // (from the death to the new owner's claim, on the database's clock: the test's polling is not in it)
    const takeoverMs = taken.acquiredMs - killedAt;
    expect(WORST_BEFORE_CLAIM_MS).toBeLessThan(TAKEOVER_MS);
    expect(takeoverMs).toBeGreaterThan(0);
    expect(takeoverMs).toBeLessThanOrEqual(TAKEOVER_MS);
    expect(workers.map((w) => w.pid)).toContain(ownerPid(taken.owner!));
    // And once the stream is applied, each event is in the read model exactly once
    await streaming;
    await caughtUp();
    await expectEachOnce('applied');
  });

  it('SIGSTOP of the owner past the bound, then SIGCONT: a peer took over, and the frozen process does not commit', async () => {
    // Given the owner in the middle of a stream
    const owner = await ownerWorker();
    const before = await lease();
    await append(100);
    await waitFor(
      async () => (await position()) > written[written.length - 100] || null,
      30_000,
      'the owner to be mid-stream',
    );
    // When it is frozen past the bound while events keep coming
    owner.child.kill('SIGSTOP');
    await append(100);
    const taken = await waitFor(
      async () => {
        const l = await lease();
        return l?.owner && l.live && l.epoch !== before.epoch ? l : null;
      },
      30_000,
      'a peer to take over',
    );
    expect(ownerPid(taken.owner!)).not.toBe(owner.pid);
    await caughtUp();
    const byFrozen = async () =>
      Number(
        (
          await db.query<{ n: string }>('SELECT count(*) AS n FROM applied WHERE pid = $1', [
            owner.pid,
          ])
        )[0].n,
      );
    const frozenRows = await byFrozen();
    // And then resumes
    owner.child.kill('SIGCONT');
    await owner.waitForOutput(/no longer (runs|owns) 'counter'/, 30_000);
    await append(20);
    await caughtUp();
    // Then it committed nothing after it resumed, and the read model has each event exactly once
    expect(await byFrozen()).toBe(frozenRows);
    await expectEachOnce('applied');
  });

  it('rolling restart: SIGTERM of the owner mid-stream hands over after its batch; no event applied or side effect run twice', async () => {
    // Given the owner busy, and a fresh replica started beside it (as a deploy does)
    const owner = await ownerWorker();
    const env = {
      DATABASE_URL: db.url,
      TAKEOVER_MS: String(TAKEOVER_MS),
      BATCH_SIZE: '20',
      HANDLER_DELAY_MS: '3',
    };
    workers.push(await spawnWorker(env));
    const from = written.length;
    const streaming = (async () => {
      for (let i = 0; i < 6; i++) await append(30);
    })();
    const base = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM applied'))[0].n);
    await waitFor(
      async () =>
        Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM applied'))[0].n) > base ||
        null,
      30_000,
      'the owner to be mid-stream',
    );
    // When it gets SIGTERM
    const stoppedAt = await dbNow();
    expect([0, 'SIGTERM']).toContain(await owner.stop('SIGTERM'));
    workers.splice(workers.indexOf(owner), 1);
    // Then it gave its lease up on the way out (no expiry to wait for), and another process runs it
    const released = await lease();
    expect(released.owner === null || ownerPid(released.owner) !== owner.pid).toBe(true);
    const handed = await waitFor(
      async () => {
        const l = await lease();
        return l?.owner && l.live && ownerPid(l.owner) !== owner.pid ? l : null;
      },
      30_000,
      'the hand-over',
    );
    // (within the bound from the signal, on the database's clock: its batch, then a peer's next tick)
    expect(handed.acquiredMs - stoppedAt).toBeLessThanOrEqual(TAKEOVER_MS);
    await streaming;
    await caughtUp();
    // And every event of this deploy was applied once and its side effect ran once
    await expectEachOnce('applied');
    const mine = new Set(written.slice(from));
    const effects = (await counts('side_effects')).filter((r) => mine.has(Number(r.index)));
    expect(effects.filter((r) => r.n !== '1')).toEqual([]);
    expect(effects).toHaveLength(mine.size);
  });
});
