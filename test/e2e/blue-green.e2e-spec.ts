import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { buildSchema } from '@ordinal/projections/internal';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startEventStoreContext } from '../support/event-store-context.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';

const TAKEOVER_MS = 2000;
const NAME = 'bluegreen';

/**
 * A blue/green deploy with real processes, as a rolling deploy: v1 serves from two workers;
 * one is replaced by two workers with v2 code (a changed handler), whose candidate's owner is
 * killed with SIGKILL during its replay (the other v2 worker takes over); v2 is promoted by
 * itself once caught up; then the other v1 worker goes. A reader loop checks every read:
 * never empty, never rows of two versions. Then a blue/green rebuild of v2 asked of one
 * replica is joined by another, which finishes and promotes it once the first is killed.
 */
describe('blue/green projection deploy across processes', () => {
  let db: TestDatabase;
  let writerApp: INestApplicationContext;
  /** The Ordinal server on the same database: versions over HTTP. */
  let server: TestServer;
  const workers: WorkerProcess[] = [];
  let written = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    writerApp = await startEventStoreContext(db.url);
    server = await startServer(db.url);
    await db.query(
      'CREATE TABLE applied (id bigserial PRIMARY KEY, index bigint NOT NULL UNIQUE, pid integer NOT NULL, key text)',
    );
    await db.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
  });
  afterAll(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop('SIGKILL')));
    await server?.close();
    await writerApp?.close();
    await db?.drop();
  });

  const worker = async (version: number) => {
    const w = await spawnWorker({
      DATABASE_URL: db.url,
      TAKEOVER_MS: String(TAKEOVER_MS),
      PROJECTION: NAME,
      VERSION: String(version),
      BATCH_SIZE: '50',
      // Slow enough that the candidate's replay is still running when it is killed.
      HANDLER_DELAY_MS: version === 2 ? '2' : '0',
    });
    workers.push(w);
    return w;
  };
  const append = async (count: number) => {
    const result = await writerApp.get(LogWriter).append({
      messages: Array.from({ length: count }, (_, n) => ({
        messageType: 'Tick',
        userId: `u-${(written + n) % 17}`,
        body: { n },
      })),
    });
    written += count;
    return (result.entries.at(-1) as { message: { id: number } }).message.id;
  };
  const build = async (version: number) =>
    (
      await db.query<{ state: string; position: string | null }>(
        `SELECT v.state, (SELECT min(position)::text FROM checkpoints c WHERE c.name = v.consumers) AS position
           FROM projection_versions v WHERE projection = $1 AND version = $2`,
        [NAME, version],
      )
    )[0];
  const owners = async (group: string) =>
    (
      await db.query<{ n: number }>(
        `SELECT count(DISTINCT owner)::int AS n FROM consumer_leases
          WHERE group_name = $1 AND owner IS NOT NULL AND expires_at > clock_timestamp()`,
        [group],
      )
    )[0].n;
  /** The read model is what a from-scratch v2 build gives (every event once, v2's key), and every event's side effect ran once. */
  const expectFromScratchV2 = async () => {
    const rows = await db.query<{ index: string; key: string }>(
      'SELECT index, key FROM applied ORDER BY index',
    );
    const events = await db.query<{ id: string; user_id: string }>(
      `SELECT index::text AS id, user_id FROM messages WHERE message_type = 'Tick' ORDER BY index`,
    );
    expect(rows.map((r) => [r.index, r.key])).toEqual(events.map((e) => [e.id, `v2:${e.user_id}`]));
    const effects = await db.query<{ index: string; n: number }>(
      'SELECT index::text, count(*)::int AS n FROM side_effects GROUP BY index ORDER BY index::bigint',
    );
    expect(effects.filter((e) => e.n !== 1)).toEqual([]);
    expect(effects.map((e) => e.index)).toEqual(events.map((e) => e.id));
  };

  it('keeps serving v1 whole during the v2 replay, switches without a gap, and v2 equals a from-scratch build', async () => {
    // Given v1 serving 600 events
    // (two v1 replicas: a rolling deploy replaces one, then the other)
    const [v1, v1b] = await Promise.all([worker(1), worker(1)]);
    let last = await append(600);
    await waitFor(
      async () => Number((await build(1))?.position ?? 0) >= last,
      30_000,
      'v1 caught up',
    );
    // And a reader loop over the read model (what readers get: the table, then the view)
    let reading = true;
    const bad: string[] = [];
    let reads = 0;
    let v1Reads = 0;
    let maxOwners = 0;
    let floor = 600;
    const reader = (async () => {
      while (reading) {
        const [r] = await db.query<{ n: number; v2: number }>(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE key LIKE 'v2:%')::int AS v2 FROM applied`,
        );
        reads += 1;
        if (r.n < floor)
          bad.push(`read ${reads}: ${r.n} rows, fewer than the ${floor} served before`);
        if (r.v2 !== 0 && r.v2 !== r.n) bad.push(`read ${reads}: ${r.v2} v2 rows among ${r.n}`);
        if (r.v2 === 0) v1Reads += 1;
        // One owner per version at all times (a build is one lease row: this checks no two processes hold it live).
        maxOwners = Math.max(maxOwners, await owners(NAME), await owners(`${NAME}@v2`));
        floor = Math.max(floor, r.n);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    // When two workers with v2 code start (rolling deploy: v1's worker stays), one replays as the candidate
    const v2 = await Promise.all([worker(2), worker(2), v1b.stop('SIGTERM')]).then(([a, b]) => [
      a,
      b,
    ]);
    await waitFor(
      async () => Number((await build(2))?.position ?? 0) >= 100,
      30_000,
      'the candidate replaying',
    );
    expect((await build(2)).state).toBe('candidate');
    expect(await owners(`${NAME}@v2`)).toBe(1);
    // (the server says who serves and lists the candidate)
    const during = (await http(server.baseUrl, 'GET', `/api/projections/${NAME}`)).body as {
      servingVersion: number;
      versions: { version: number; state: string }[];
    };
    expect(during.servingVersion).toBe(1);
    expect(during.versions.map((v) => [v.version, v.state])).toEqual([
      [1, 'serving'],
      [2, 'candidate'],
    ]);
    // And its owner is killed mid-replay while events keep coming: the other v2 worker takes over
    const [{ owner }] = await db.query<{ owner: string }>(
      `SELECT owner FROM consumer_leases WHERE group_name = $1`,
      [`${NAME}@v2`],
    );
    await v2.find((w) => w.pid === Number(owner.split(':')[1]))!.stop('SIGKILL');
    last = await append(200);
    // Then v2 is promoted by itself once it has caught up with v1
    await waitFor(async () => (await build(2))?.state === 'serving', 60_000, 'v2 promoted');
    expect((await build(1)).state).toBe('previous');
    // And each version has had one owner at a time
    expect(await owners(NAME)).toBeLessThanOrEqual(1);
    expect(await owners(`${NAME}@v2`)).toBe(1);
    // When the v1 worker goes (the rest of the rolling deploy) and more events arrive
    await v1.stop('SIGTERM');
    last = await append(100);
    await waitFor(
      async () => Number((await build(2)).position) >= last,
      30_000,
      'v2 applied the events after the switch',
    );
    // (and over HTTP: ?atLeast answers for v2, a second promotion is refused)
    const after = await http(server.baseUrl, 'GET', `/api/projections/${NAME}?atLeast=${last}`);
    expect(after.body).toMatchObject({ reached: true, servingVersion: 2 });
    expect((after.body as { servingPosition: number }).servingPosition).toBeGreaterThanOrEqual(
      last,
    );
    const again = await http(server.baseUrl, 'POST', `/api/projections/${NAME}/versions/2/promote`);
    expect([again.status, (again.body as { code: string }).code]).toEqual([
      409,
      'projection_version_conflict',
    ]);
    reading = false;
    await reader;

    // Then no read saw an empty, shrunk or mixed model, and reads of v1 happened during the replay
    expect(bad).toEqual([]);
    expect(v1Reads).toBeGreaterThan(0);
    expect(maxOwners).toBe(1);
    // And v2's model is what a from-scratch v2 build gives, and every event's side effect ran
    // exactly once across the switch (and the kill)
    await expectFromScratchV2();

    // When v1 is retired, exactly its schema goes; v2 keeps applying (its serial has its own sequence)
    const schemas = async () =>
      (
        await db.query<{ nspname: string }>(
          "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bluegreen%' ORDER BY nspname",
        )
      ).map((r) => r.nspname);
    const v1Schema = buildSchema({ projection: NAME, version: 1, build: 1 });
    const v2Schema = buildSchema({ projection: NAME, version: 2, build: 1 });
    expect(await schemas()).toEqual([v1Schema, v2Schema]);
    const retired = await http(
      server.baseUrl,
      'POST',
      `/api/projections/${NAME}/versions/1/retire`,
    );
    expect(retired.body).toEqual({ name: NAME, version: 1, dropped: [v1Schema] });
    expect(await schemas()).toEqual([v2Schema]);
    last = await append(10);
    await waitFor(
      async () => Number((await build(2)).position) >= last,
      30_000,
      'v2 after the retirement',
    );
    const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM applied');
    expect(n).toBe(written);
  });
  it('a blue/green rebuild asked of one replica is joined by the other, which finishes and promotes it when the first is killed', async () => {
    // Given v2 serving from its worker (the test above), and a second replica with v2 code
    const fresh = await worker(2);
    const [{ owner }] = await db.query<{ owner: string }>(
      `SELECT owner FROM consumer_leases WHERE group_name = $1`,
      [`${NAME}@v2`],
    );
    const starter = workers.find((w) => w.pid === Number(owner.split(':')[1]))!;
    expect(starter.pid).not.toBe(fresh.pid);
    // When a blue/green rebuild is asked over HTTP (the server carries it to v2's owner, which starts it)
    const rebuilt = await http(server.baseUrl, 'POST', `/api/projections/${NAME}/rebuild`);
    expect(rebuilt.status).toBe(202);
    // Then the other replica joins the new build's group while it is a candidate
    const members = async () =>
      (
        await db.query<{ owner: string }>(
          `SELECT owner FROM consumer_processes WHERE $1 = ANY(groups) AND expires_at > clock_timestamp()`,
          [`${NAME}@v2.2`],
        )
      ).map((r) => Number(r.owner.split(':')[1]));
    await waitFor(
      async () => (await members()).includes(fresh.pid),
      10_000,
      'the other replica in the new build',
    );
    // When the replica that started it is killed, and events keep coming
    await starter.stop('SIGKILL');
    const last = await append(50);
    // Then the other replica finishes the build and promotes it by itself
    const rebuild = async () =>
      (
        await db.query<{ state: string }>(
          `SELECT state FROM projection_versions WHERE projection = $1 AND version = 2 AND build = 2`,
          [NAME],
        )
      )[0]?.state;
    await waitFor(async () => (await rebuild()) === 'serving', 30_000, 'the rebuild promoted');
    const after = await http(
      server.baseUrl,
      'GET',
      `/api/projections/${NAME}?atLeast=${last}&timeoutMs=10000`,
    );
    expect(after.body).toMatchObject({ reached: true, servingVersion: 2, servingBuild: 2 });
    // And readers get what a from-scratch v2 build gives; every side effect ran once
    await expectFromScratchV2();
  });
});

/**
 * The server runs no projection: a rebuild goes to the worker that owns it. A refusal the
 * worker raises (a typed error) comes back with its code, answered as it is in-process; only a
 * request nobody answers is `consumer_request_failed`.
 */
describe('a rebuild the owning process refuses, over HTTP', () => {
  const HELD = 'held';
  let db: TestDatabase;
  let server: TestServer;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.query(
      'CREATE TABLE applied (id bigserial PRIMARY KEY, index bigint NOT NULL UNIQUE, pid integer NOT NULL, key text)',
    );
    server = await startServer(db.url, { ORDINAL_TAKEOVER_MS: String(TAKEOVER_MS) });
    // A versioned projection whose candidates are promoted by hand only: one stays a candidate.
    worker = await spawnWorker({
      DATABASE_URL: db.url,
      TAKEOVER_MS: String(TAKEOVER_MS),
      PROJECTION: HELD,
      VERSION: '1',
      PROMOTE_AT_LAG: 'false',
      SIDE_EFFECT_ROWS: '0',
    });
  });
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await server?.close();
    await db?.drop();
  });

  it('answers 409 projection_version_conflict, not a 503 to retry, while a candidate is being built', async () => {
    // Given the projection run by the worker, and a blue/green rebuild asked over HTTP (a candidate)
    await waitFor(
      async () =>
        (await http(server.baseUrl, 'GET', '/api/projections')).body.projections.find(
          (p: { name: string; owner?: unknown }) => p.name === HELD && p.owner,
        ),
      20_000,
      'the worker owning the projection',
    );
    const first = await http(server.baseUrl, 'POST', `/api/projections/${HELD}/rebuild`);
    expect(first.status).toBe(202);
    const versions = (await http(server.baseUrl, 'GET', `/api/projections/${HELD}`)).body
      .versions as { version: number; build: number; state: string }[];
    expect(versions.map((v) => [v.version, v.build, v.state])).toEqual([
      [1, 1, 'serving'],
      [1, 2, 'candidate'],
    ]);
    // When another blue/green rebuild is asked (the worker refuses it)
    const second = await http(server.baseUrl, 'POST', `/api/projections/${HELD}/rebuild`);
    // Then the answer is the refusal's own: its status, code and message, and no Retry-After
    expect([second.status, second.body.code, second.body.message]).toEqual([
      409,
      'projection_version_conflict',
      `Projection '${HELD}': build 2 of v1 is already being built; promote or retire it first`,
    ]);
    expect(second.headers.get('retry-after')).toBeNull();
  });
});
