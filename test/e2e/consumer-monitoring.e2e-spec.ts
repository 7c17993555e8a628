import { ownershipTimings } from '@ordinal/ownership';
import { runCli } from '../support/cli-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

/**
 * Monitoring consumers that run in other processes: a projection and a subscription run by two
 * replicas of a user's service (one owns each, the other stands by), watched from the server,
 * its CLI, and through a kill -9 of the owner.
 */
/** The takeover bound of the workers and the server: leases live 1800 ms, renewed every 600 ms. */
const TAKEOVER_MS = 3000;
const TTL_MS = ownershipTimings(TAKEOVER_MS).ttlMs;

interface Proc {
  id: string;
  pid: number;
  host: string;
  heartbeatAgeMs: number;
  self: boolean;
  stale?: boolean;
}
interface Entry {
  name: string;
  kind: string;
  state: string;
  owner: Proc | null;
  standbys: Proc[];
}

describe('monitoring consumers run by two replicas of a service (owner, standbys, a dead owner)', () => {
  let db: TestDatabase;
  let server: TestServer;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.query('CREATE TABLE applied (index bigint NOT NULL, pid integer NOT NULL, key text)');
    await db.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
    server = await startServer(db.url, { ORDINAL_TAKEOVER_MS: String(TAKEOVER_MS) });
    const env = { DATABASE_URL: db.url, TAKEOVER_MS: String(TAKEOVER_MS), SUBSCRIPTION: 'mailer' };
    workers.push(...(await Promise.all([spawnWorker(env), spawnWorker(env)])));
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await server?.close();
    await db?.drop();
  });

  const entries = async (): Promise<Entry[]> =>
    (await http(server.baseUrl, 'GET', '/api/projections')).body.projections;
  const entry = async (name: string): Promise<Entry | undefined> =>
    (await entries()).find((e) => e.name === name);
  /** Both consumers, once each has an owner and the other worker standing by. */
  const settled = () =>
    waitFor(
      async () => {
        const all = await entries();
        const pair = ['counter', 'mailer'].map((n) => all.find((e) => e.name === n));
        return pair.every((e) => e?.owner && e.standbys.length === 1) ? (pair as Entry[]) : null;
      },
      30_000,
      'an owner and a standby for each consumer',
    );

  it('lists the projection and the subscription with their owner and the process standing by, and leaves out what only the owner knows', async () => {
    // Given two workers, each able to run `counter` (a projection) and `mailer` (a subscription)
    const [counter, mailer] = await settled();
    const pids = workers.map((w) => w.pid).sort();
    // Then the server, which runs neither, names the owner and the standby of each
    for (const [e, kind] of [
      [counter, 'projection'],
      [mailer, 'subscription'],
    ] as const) {
      expect(e.kind).toBe(kind);
      expect(e.state).toBe('running');
      expect([e.owner!.pid, e.standbys[0].pid].sort()).toEqual(pids);
      expect(e.owner).toMatchObject({ self: false, stale: false, host: expect.any(String) });
      expect(e.standbys[0]).toMatchObject({
        self: false,
        host: expect.any(String),
        heartbeatAgeMs: expect.any(Number),
      });
      // And it does not report as zero what it cannot know (the owner's retries, skips, late arrivals)
      for (const field of ['retries', 'skipped', 'pendingLate', 'lateDelivered', 'lastErrorAt'])
        expect(e).not.toHaveProperty(field);
    }
    // And one consumer alone answers the same
    const one = (await http(server.baseUrl, 'GET', '/api/projections/counter')).body;
    expect(one.standbys.map((s: Proc) => s.pid)).toEqual([counter.standbys[0].pid]);
  });

  it("ordinal status and ordinal projections list show each consumer's owner and standbys", async () => {
    const [counter, mailer] = await settled();
    const env = { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'dev-ordinal-token' };
    const status = await runCli(['status'], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/NAME +KIND +STREAM +POSITION +LAG +STATE +OWNER +STANDBYS/);
    for (const e of [counter, mailer])
      expect(status.stdout).toMatch(
        new RegExp(
          `${e.name} +${e.kind} +types:Tick +\\d+ +\\d+ +running +${e.owner!.pid}@\\S+ \\(\\d+ ms ago\\) +${e.standbys[0].pid}@\\S+`,
        ),
      );
    const list = await runCli(['projections', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/NAME +KIND +POSITION +LAG +STATE +OWNER +STANDBYS +LAST ERROR/);
    for (const e of [counter, mailer])
      expect(list.stdout).toMatch(
        new RegExp(
          `${e.name} +${e.kind} +\\d+ +\\d+ +running +${e.owner!.pid}@\\S+ \\(\\d+ ms ago\\) +${e.standbys[0].pid}@\\S+`,
        ),
      );
  });

  it('a killed owner is reported stale as soon as its heartbeat is overdue, never running, until its standby takes over', async () => {
    // Given the owner of `counter`
    const [counter] = await settled();
    const dead = counter.owner!.pid;
    const survivor = counter.standbys[0].pid;
    const owner = workers.find((w) => w.pid === dead)!;
    // When it is killed
    owner.child.kill('SIGKILL');
    await owner.exited;
    // Then, once more than half its lease has passed without a heartbeat (a live owner renews
    // every third of it), the server reports it as overdue: state `stale`, not `running`
    const overdue = await waitFor(
      async () => {
        const e = await entry('counter');
        if (e?.owner?.pid !== dead)
          throw new Error(`the lease ran out before it was seen overdue: ${JSON.stringify(e)}`);
        return e.owner.heartbeatAgeMs > TTL_MS / 2 + 50 ? e : null;
      },
      10_000,
      'the dead owner overdue',
    );
    expect(overdue.state).toBe('stale');
    expect(overdue.owner).toMatchObject({ pid: dead, stale: true });
    // And once its lease ran out the standby runs it, with nobody left standing by
    const taken = await waitFor(
      async () => {
        const e = await entry('counter');
        return e?.owner?.pid === survivor ? e : null;
      },
      20_000,
      'the takeover',
    );
    expect(taken.state).toBe('running');
    expect(taken.standbys).toEqual([]);
  });
});
