import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startEventStoreContext } from '../support/event-store-context.js';
import { waitFor } from '../support/test-server.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';

const TAKEOVER_MS = 3000;

/**
 * Consumer ownership through PgBouncer in transaction mode (a real pgbouncer, started by the
 * test): two processes of a user's service reach the database only through the pooler (their
 * migrations, leases, fences, batches, reads); kill -9 of the owner, the other takes over
 * within the bound, and nothing is applied twice.
 */
describe('ownership through PgBouncer in transaction mode', () => {
  let db: TestDatabase;
  let bouncer: PgBouncer;
  let writerApp: INestApplicationContext;
  const workers: WorkerProcess[] = [];
  const written: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    bouncer = await startPgBouncer();
    writerApp = await startEventStoreContext(db.url);
    await db.query('CREATE TABLE applied (index bigint NOT NULL, pid integer NOT NULL, key text)');
    await db.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
    const env = {
      DATABASE_URL: bouncer.url(db.name),
      TAKEOVER_MS: String(TAKEOVER_MS),
      BATCH_SIZE: '20',
      HANDLER_DELAY_MS: '2',
    };
    // One after the other: the second finds the migrations applied (their lock goes through the pooler too).
    workers.push(await spawnWorker(env));
    workers.push(await spawnWorker(env));
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await writerApp?.close();
    await bouncer?.stop();
    await db?.drop();
  });

  const append = async (count: number) => {
    const result = await writerApp.get(LogWriter).append({
      messages: Array.from({ length: count }, (_, n) => ({
        messageType: 'Tick',
        userId: `user-${n % 7}`,
        body: { n, at: written.length },
      })),
    });
    written.push(...result.entries.map((e) => (e as { message: { id: number } }).message.id));
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
  const liveOwner = (except?: WorkerProcess) =>
    waitFor(
      async () => {
        const [row] = await db.query<{ owner: string | null; live: boolean }>(
          `SELECT owner, expires_at > clock_timestamp() AS live FROM consumer_leases WHERE name = 'counter'`,
        );
        const owner =
          row?.owner && row.live
            ? workers.find((w) => w.pid === Number(row.owner!.split(':')[1]))
            : undefined;
        return owner && owner !== except ? owner : null;
      },
      30_000,
      'a live owner among the workers',
    );

  it('both processes reach the database through the pooler only', async () => {
    const clients = await bouncer.show<{ database: string; application_name: string }>('CLIENTS');
    for (const w of workers)
      expect(
        clients.filter((c) => c.database === db.name && c.application_name === `worker-${w.pid}`)
          .length,
      ).toBeGreaterThan(0);
  });

  it('kill -9 of the owner: the other takes over within the bound and nothing is applied twice', async () => {
    // Given events applied by the owner
    await append(100);
    await caughtUp();
    const owner = await liveOwner();
    const other = workers.find((w) => w !== owner)!;
    // When it is killed mid-stream
    await append(100);
    await owner.stop('SIGKILL');
    const killedAt = Date.now();
    // Then the other process owns the projection within the bound
    const next = await liveOwner(owner);
    expect(next).toBe(other);
    expect(Date.now() - killedAt).toBeLessThan(TAKEOVER_MS + 1000);
    // And it applies everything, each event once
    await append(100);
    await caughtUp();
    const rows = await db.query<{ index: string; n: string }>(
      'SELECT index, count(*) AS n FROM applied GROUP BY index ORDER BY index',
    );
    expect(rows.filter((r) => r.n !== '1')).toEqual([]);
    expect(rows.map((r) => Number(r.index))).toEqual([...written].sort((a, b) => a - b));
    // And a live side effect ran twice only for events of the killed owner's batch in flight
    const repeated = await db.query<{ index: string; pids: number[] }>(
      'SELECT index, array_agg(pid) AS pids FROM side_effects GROUP BY index HAVING count(*) > 1',
    );
    for (const r of repeated) expect(r.pids).toContain(owner.pid);
    expect(repeated.length).toBeLessThanOrEqual(20);
  });
});
