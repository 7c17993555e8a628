import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startEventStoreContext } from '../support/event-store-context.js';
import { waitFor } from '../support/test-server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

const TAKEOVER_MS = 4000;

/**
 * A network cut between the owner and PostgreSQL (its connections black-holed by a proxy, no
 * reset either way): a peer with its own path to the database takes over within the bound;
 * when the network heals, the cut-off process commits nothing and stands by.
 */
describe('one owner per projection across a network cut', () => {
  let db: TestDatabase;
  let writerApp: INestApplicationContext;
  let proxy: TcpProxy;
  const workers: WorkerProcess[] = [];
  const written: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    writerApp = await startEventStoreContext(db.url);
    await db.query('CREATE TABLE applied (index bigint NOT NULL, pid integer NOT NULL, key text)');
    await db.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
    const url = new URL(db.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  });
  afterAll(async () => {
    proxy?.heal();
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await proxy?.close();
    await writerApp?.close();
    await db?.drop();
  });

  const append = async (count: number) => {
    const result = await writerApp.get(LogWriter).append({
      messages: Array.from({ length: count }, (_, n) => ({
        messageType: 'Tick',
        userId: `user-${n % 5}`,
        body: { n },
      })),
    });
    written.push(...result.entries.map((e) => (e as { message: { id: number } }).message.id));
  };
  const lease = async () =>
    (
      await db.query<{ owner: string | null; live: boolean; acquiredMs: number }>(
        `SELECT owner, expires_at > clock_timestamp() AS live,
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
  const ownerPid = (owner: string | null) => (owner ? Number(owner.split(':')[1]) : null);
  const rowsBy = async (pid: number) =>
    Number(
      (await db.query<{ n: string }>('SELECT count(*) AS n FROM applied WHERE pid = $1', [pid]))[0]
        .n,
    );

  it('the peer takes over within the bound; after the network heals, the cut-off owner does not commit', async () => {
    // Given the owner reaching the database through the proxy, and a peer with a direct path
    const env = { TAKEOVER_MS: String(TAKEOVER_MS), BATCH_SIZE: '20', HANDLER_DELAY_MS: '3' };
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const cutOff = await spawnWorker({ ...env, DATABASE_URL: viaProxy.toString() });
    workers.push(cutOff);
    await waitFor(
      async () => ownerPid((await lease())?.owner ?? null) === cutOff.pid || null,
      30_000,
      'the proxied worker to own it',
    );
    const peer = await spawnWorker({ ...env, DATABASE_URL: db.url });
    workers.push(peer);
    await append(100);
    await waitFor(
      async () => (await rowsBy(cutOff.pid)) > 0 || null,
      30_000,
      'the owner to be mid-stream',
    );
    // When its network is cut (the time read just before) while events keep coming
    const cutAt = await dbNow();
    proxy.cut();
    await append(100);
    // Then the peer owns it within the bound and applies everything
    const taken = await waitFor(
      async () => {
        const l = await lease();
        return l?.live && ownerPid(l.owner) === peer.pid ? l : null;
      },
      30_000,
      'the peer to take over',
    );
    // (from the cut to the peer's claim on the database's clock: neither the append above nor
    // the test's polling is in it; by design at most ttl + tick after the cut, then the claim)
    expect(taken.acquiredMs - cutAt).toBeGreaterThan(0);
    expect(taken.acquiredMs - cutAt).toBeLessThanOrEqual(TAKEOVER_MS);
    const last = Math.max(...written);
    await waitFor(
      async () =>
        Number(
          (
            await db.query<{ position: string }>(
              `SELECT position FROM checkpoints WHERE name = 'counter'`,
            )
          )[0].position,
        ) >= last || null,
      60_000,
      'the peer to catch up',
    );
    const before = await rowsBy(cutOff.pid);
    // When the network heals
    proxy.heal();
    await cutOff.waitForOutput(/no longer (runs|owns) 'counter'/, 30_000);
    await append(10);
    await waitFor(
      async () =>
        Number(
          (
            await db.query<{ position: string }>(
              `SELECT position FROM checkpoints WHERE name = 'counter'`,
            )
          )[0].position,
        ) >= Math.max(...written) || null,
      60_000,
      'the last events',
    );
    // Then the cut-off process committed nothing more, and each event is in the read model once
    expect(await rowsBy(cutOff.pid)).toBe(before);
    const counts = await db.query<{ index: string; n: string }>(
      'SELECT index, count(*) AS n FROM applied GROUP BY index ORDER BY index',
    );
    expect(counts.filter((r) => r.n !== '1')).toEqual([]);
    expect(counts.map((r) => Number(r.index))).toEqual([...written].sort((a, b) => a - b));
  });
});
