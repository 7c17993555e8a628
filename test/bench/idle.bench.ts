/**
 * What an idle projection worker costs, and how fast it reacts when an event comes. Prints JSON.
 *
 * BENCH_WORKERS worker processes (default 1) of the projections benchmark
 * (support/projection-worker.ts: BENCH_PARTITIONS partitions, default 9, keyed by userId, a
 * pool of 3, default settings) start on a log of BENCH_EVENTS events (default 1,000, applied
 * before the measure), share the partitions out and go idle. Then, over BENCH_SECONDS
 * (default 20):
 * - `cpuMsPerSecond`: ms of CPU a second of the workers and of their PostgreSQL backends (from
 *   /proc; the backends are the database's, this process's own connection left out);
 * - `transactionsPerSecond`: the database's committed transactions a second (pg_stat_database,
 *   one per autocommitted statement), this process's own left out;
 * - with BENCH_STATEMENTS=1, a second set of workers on a new database whose statements are
 *   logged (log_min_duration_statement = 0 for that database only) counts each kind of
 *   statement a second over the same time (read from PostgreSQL's log, BENCH_PG_LOG, default
 *   /var/log/postgresql/postgresql-15-main.log; logging costs CPU, so not in the CPU measure).
 * Then BENCH_REACTIONS events (default 20) are written one at a time from this process (another
 * process than the workers, as a service's writer usually is) with a random 100–300 ms pause
 * between them: `reactionMs` is the time from the append's answer until the worker's read
 * model holds the event (polled every 1 ms; the handler itself takes about 1 ms of I/O).
 */
import 'reflect-metadata';
import { openSync, readSync, statSync, closeSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { LogWriter } from '@ordinal/nestjs';
import { createBenchDatabase, type BenchDatabase } from './support/bench-database.js';
import { cpuUs } from './support/proc-cpu.js';
import {
  appendTicks,
  poll,
  spawnWorker as spawnProjectionWorker,
  writerApp,
  type Worker,
} from './support/projection-bench.js';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 9);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const REACTIONS = Number(process.env.BENCH_REACTIONS ?? 20);
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';
const PG_LOG = process.env.BENCH_PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';

/** A worker as the projections benchmark starts it. */
const spawnWorker = (url: string) =>
  spawnProjectionWorker(url, { PARTITIONS: String(PARTITIONS), BATCH_SIZE: '500', DB_POOL: '3' });
const append = (writer: LogWriter, count: number, offset = 0) => appendTicks(writer, count, offset);

const stop = (w: Worker) =>
  new Promise<void>((resolve) => {
    if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve();
    const timer = setTimeout(() => w.child.kill('SIGKILL'), 10_000);
    w.child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    w.child.kill('SIGTERM');
  });

interface Setup {
  db: BenchDatabase;
  client: pg.Client;
  workers: Worker[];
}

/** A database with EVENTS events, WORKERS workers caught up on them and every partition owned. */
async function setUp(logStatements: boolean): Promise<Setup> {
  const db = await createBenchDatabase();
  // Before any session opens: the setting applies to sessions that start after it.
  if (logStatements) {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${db.name} SET log_min_duration_statement = 0`);
    await admin.end();
  }
  const writer = await writerApp(db.url, 2);
  const client = new pg.Client({ connectionString: db.url, application_name: 'idle-bench' });
  await client.connect();
  // Its own statements are not the workers': not logged.
  if (logStatements) await client.query('SET log_min_duration_statement = -1');
  await client.query(
    'CREATE TABLE applied (index bigint NOT NULL, pid integer NOT NULL, key text)',
  );
  await client.query('CREATE TABLE side_effects (index bigint NOT NULL, pid integer NOT NULL)');
  const last = await append(writer.get(LogWriter), EVENTS);
  // Closed while the workers idle: its own router and polls are not theirs to count.
  await writer.close();
  const workers: Worker[] = [];
  for (let i = 0; i < WORKERS; i++) workers.push(await spawnWorker(db.url));
  const pids = workers.map((w) => w.pid);
  await poll(
    async () => {
      const { rows } = await client.query<{ owner: string | null; live: boolean }>(
        `SELECT owner, expires_at > clock_timestamp() AS live FROM consumer_leases WHERE group_name = 'bench'`,
      );
      const owners = rows.map((r) => (r.live && r.owner ? Number(r.owner.split(':')[1]) : null));
      if (owners.length !== PARTITIONS || owners.some((o) => o === null || !pids.includes(o)))
        return null;
      const counts = pids.map((pid) => owners.filter((o) => o === pid).length);
      return Math.max(...counts) - Math.min(...counts) <= 1 ? true : null;
    },
    60_000,
    'balanced partitions',
    50,
  );
  await poll(
    async () => {
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM checkpoints WHERE name LIKE 'bench#%' AND position >= $1`,
        [last],
      );
      return Number(rows[0].n) === PARTITIONS ? true : null;
    },
    120_000,
    'the workers to catch up',
    50,
  );
  // Let start-up work (rebalancing, the first checks) settle.
  await new Promise((r) => setTimeout(r, 3000));
  return { db, client, workers };
}

async function tearDown(s: Setup): Promise<void> {
  await Promise.all(s.workers.map(stop));
  await s.client.end();
  await s.db.drop();
}

/** The database's backends but this process's own connection. */
async function backends(s: Setup): Promise<number[]> {
  const { rows } = await s.client.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()
`,
    [s.db.name],
  );
  return rows.map((r) => r.pid);
}

/** The idle cost: CPU of the workers and of their backends, and transactions, over SECONDS. */
async function idleCost(s: Setup) {
  const xacts = async () => {
    const { rows } = await s.client.query<{ n: string }>(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
      [s.db.name],
    );
    return Number(rows[0].n);
  };
  const workers0 = s.workers.map((w) => cpuUs(w.pid));
  const pg0 = new Map((await backends(s)).map((pid) => [pid, cpuUs(pid)]));
  const x0 = await xacts();
  const started = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const seconds = (performance.now() - started) / 1000;
  const workersUs = s.workers.reduce((t, w, i) => t + cpuUs(w.pid) - workers0[i], 0);
  let pgUs = 0;
  const now = await backends(s);
  for (const pid of now) pgUs += cpuUs(pid) - (pg0.get(pid) ?? 0);
  // This process's own statements in the interval: the two counts and the backends' read.
  const x1 = (await xacts()) - 3;
  const perSecond = (us: number) => Math.round((us / 1000 / seconds / WORKERS) * 10) / 10;
  return {
    seconds: Math.round(seconds * 10) / 10,
    cpuMsPerSecondPerWorker: {
      worker: perSecond(workersUs),
      postgres: perSecond(pgUs),
      total: perSecond(workersUs + pgUs),
    },
    backends: now.length,
    transactionsPerSecond: Math.round(((x1 - x0) / seconds) * 10) / 10,
  };
}

/** Each kind of statement the workers' sessions ran over SECONDS, a second (from PostgreSQL's log). */
async function statements(s: Setup) {
  const start = statSync(PG_LOG).size;
  const started = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const seconds = (performance.now() - started) / 1000;
  const end = statSync(PG_LOG).size;
  const fd = openSync(PG_LOG, 'r');
  const buffer = Buffer.alloc(end - start);
  readSync(fd, buffer, 0, buffer.length, start);
  closeSync(fd);
  const counts = new Map<string, number>();
  const marker = `@${s.db.name} LOG:  duration: `;
  for (const line of buffer.toString('utf8').split('\n')) {
    const at = line.indexOf(marker);
    if (at < 0) continue;
    // Simple protocol: `statement: …`; extended: parse, bind and execute are logged apart.
    const text = line.slice(at + marker.length).replace(/^[\d.]+ ms\s+/, '');
    const m = /^(?:statement: |execute [^:]*: )(.*)$/.exec(text);
    if (!m) continue;
    const key = m[1].replace(/\s+/g, ' ').slice(0, 90);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  return {
    statementsPerSecond: Math.round((total / seconds) * 10) / 10,
    byStatement: Object.fromEntries(
      [...counts.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => [k, Math.round((n / seconds) * 10) / 10]),
    ),
  };
}

/** Time from an append's answer (another process) until the read model holds the event. */
async function reactions(s: Setup) {
  const app = await writerApp(s.db.url, 2);
  const writer = app.get(LogWriter);
  const times: number[] = [];
  try {
    for (let i = 0; i < REACTIONS; i++) {
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      const id = await append(writer, 1, 1_000_000 + i);
      const at = performance.now();
      await poll(
        async () => {
          const { rows } = await s.client.query('SELECT 1 FROM applied WHERE index = $1', [id]);
          return rows.length > 0 ? true : null;
        },
        30_000,
        `event ${id} applied`,
        1,
      );
      times.push(Math.round((performance.now() - at) * 10) / 10);
    }
  } finally {
    await app.close();
  }
  const sorted = [...times].sort((a, b) => a - b);
  const pct = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return { events: REACTIONS, p50: pct(50), p90: pct(90), max: sorted.at(-1), ms: times };
}

async function main(): Promise<void> {
  const load = loadavg().map((l) => Math.round(l * 100) / 100);
  const s = await setUp(false);
  let idle, reaction;
  try {
    idle = await idleCost(s);
    reaction = REACTIONS > 0 ? await reactions(s) : null;
  } finally {
    await tearDown(s);
  }
  let logged = null;
  if (STATEMENTS) {
    const l = await setUp(true);
    try {
      logged = await statements(l);
    } finally {
      await tearDown(l);
    }
  }
  console.log(
    JSON.stringify(
      {
        benchmark: 'idle',
        setup: { workers: WORKERS, partitions: PARTITIONS, events: EVENTS, seconds: SECONDS },
        loadAverage: load,
        idle,
        statements: logged,
        reactionMs: reaction,
      },
      null,
      2,
    ),
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
