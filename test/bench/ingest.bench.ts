/**
 * `npm run bench:ingest` (B1, issue 15): REST ingest as users run it — every server in its own
 * process with default settings, load from wrk in another — in one JSON object:
 *
 * - single messages (`PUT /api/events/message`) at 1, 8 and 32 keep-alive clients, in both
 *   ordering modes (gapless, concurrent), each with the duplicate window at its default
 *   (2,000) first and then off, beside the seed's write path (one transaction per message
 *   behind a process-wide mutex) on the same PostgreSQL, and beside a bare Fastify route with
 *   the writer's group commit and multi-row insert and nothing else (support/bare-ingest-server.ts:
 *   `ratiosAt32.gaplessOverBare`, goal ≥ 0.5, issue 30);
 * - batches (`POST /api/events/messages`, 100 messages a request) at 8 clients in both modes,
 *   beside a bare `pg` baseline: 8 connections committing 100-row INSERTs into a copy of the
 *   log's table (support/pg-insert-load.ts, its own process).
 *
 * The machine is shared and noisy, so all servers run side by side and their phases are
 * interleaved: each round measures every client count on every server, rotating which goes
 * first, and the report gives each figure's median over the rounds (every run is listed too).
 * Ratios are medians of the rounds' own ratios (same round, same load on the machine).
 * Beside msg/s each phase reports the CPU it cost per message — the server process and its
 * PostgreSQL backends, from /proc — which other work on a shared machine disturbs far less
 * than throughput: on a saturated machine it is what throughput follows.
 *
 * BENCH_ROUNDS (3), BENCH_SECONDS (5 per phase), BENCH_CLIENTS ("1,8,32"), BENCH_PART
 * ("single,batches") shorten a development run.
 *
 * `BENCH_AUTH=jwt-rules` adds the part `auth` (alone: `BENCH_PART=auth`): single messages and
 * batches on two gapless servers side by side, one with the static token and no rules, one
 * with JWT authentication (ES256) and 50 access rules (support/auth-fixture.ts); the ratio
 * of the second to the first per round (goal ≥ 0.9).
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, type BenchDatabase } from './support/bench-database.js';
import { runLoad, type LoadResult } from './support/http-load.js';
import { freePort } from './support/free-port.js';
import { migrateWith, startChild, type ChildServer } from './support/child-server.js';
import { hasWrk, runWrk } from './support/wrk-load.js';
import { backendsOf, cpuUs } from './support/proc-cpu.js';
import { authFixture } from './support/auth-fixture.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const baselineMain = join(here, 'support', 'seed-baseline-server.js');
const bareMain = join(here, 'support', 'bare-ingest-server.js');
const pgInsertMain = join(here, 'support', 'pg-insert-load.js');
const CLIENTS = (process.env.BENCH_CLIENTS ?? '1,8,32').split(',').map(Number);
const AT = CLIENTS.includes(32) ? 32 : CLIENTS[CLIENTS.length - 1];
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const PER_PHASE = Number(process.env.BENCH_MESSAGES ?? 20_000);
const MAX_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PARTS = new Set(
  (
    process.env.BENCH_PART ??
    (process.env.BENCH_AUTH === 'jwt-rules' ? 'single,batches,auth' : 'single,batches')
  ).split(','),
);
const BATCH = 100;
const BATCH_CLIENTS = 8;
const HEADERS: Record<string, string> = { authorization: 'Bearer dev-ordinal-token' };
const body = (n: number) =>
  JSON.stringify({
    messageType: 'OrderPlaced',
    userId: `customer-${n % 97}`,
    content: { orderId: `o-${n}`, total: 49.9, lines: [{ sku: 'rocket', qty: 1 }] },
  });

/** The Ordinal configurations measured: defaults first, then the window off. */
const CONFIGS: { name: string; env: Record<string, string> }[] = [
  { name: 'gapless', env: {} },
  { name: 'concurrent', env: { ORDINAL_ORDERING: 'concurrent' } },
  { name: 'gaplessWindowOff', env: { ORDINAL_DUPLICATE_WINDOW: '0' } },
  {
    name: 'concurrentWindowOff',
    env: { ORDINAL_ORDERING: 'concurrent', ORDINAL_DUPLICATE_WINDOW: '0' },
  },
];

let phaseCounter = 0;

/** One phase: `clients` keep-alive clients publishing for `seconds` (or PER_PHASE messages without wrk). */
async function phase(
  baseUrl: string,
  clients: number,
  seconds = MAX_SECONDS,
  batch = 0,
  headers = HEADERS,
): Promise<LoadResult> {
  const url = `${baseUrl}/api/events/${batch > 0 ? 'messages' : 'message'}`;
  phaseCounter += 1;
  if (hasWrk())
    return runWrk({ url, clients, seconds, headers, bodyPrefix: `p${phaseCounter}`, batch });
  if (batch > 0) throw new Error('the batches benchmark needs wrk (/usr/bin/wrk)');
  const total = clients === 1 ? Math.min(PER_PHASE, 5_000) : PER_PHASE;
  return runLoad({
    url,
    clients,
    total,
    maxSeconds: seconds,
    headers,
    body: (n) => body(phaseCounter * 1e7 + n),
  });
}

type Measured1 = LoadResult & {
  cpuUsPerMsg?: { server: number; postgres: number };
  serverCoreShare?: number;
};
let admin: pg.Client;

/** A phase with the CPU it cost per message: the server's process and its database's backends. */
async function measured(
  serverPid: number,
  database: string,
  run: () => Promise<LoadResult>,
): Promise<Measured1> {
  const backends = await backendsOf(admin, database);
  const server0 = cpuUs(serverPid);
  const pg0 = new Map(backends.map((pid) => [pid, cpuUs(pid)]));
  const result = await run();
  const server = cpuUs(serverPid) - server0;
  // Backends opened during the phase count from 0.
  let postgres = 0;
  for (const pid of await backendsOf(admin, database)) postgres += cpuUs(pid) - (pg0.get(pid) ?? 0);
  const per = (us: number) => (result.messages > 0 ? Math.round(us / result.messages) : 0);
  // The share of one core the server's process used: near 1, its one thread is what limits the phase.
  const serverCoreShare = result.seconds > 0 ? round2(server / (result.seconds * 1e6)) : 0;
  return {
    ...result,
    cpuUsPerMsg: { server: per(server), postgres: per(postgres) },
    serverCoreShare,
  };
}

/** The bare pg baseline of the batches part, in its own process. */
function pgInsertPhase(databaseUrl: string): LoadResult {
  const run = spawnSync(
    process.execPath,
    [pgInsertMain, databaseUrl, String(BATCH_CLIENTS), String(MAX_SECONDS), String(BATCH)],
    { encoding: 'utf8' },
  );
  const m = /RESULT (.*)/.exec(run.stdout ?? '');
  if (!m) throw new Error(`pg-insert-load failed: ${run.stderr || run.stdout}`);
  const { rows, seconds } = JSON.parse(m[1]) as { rows: number; seconds: number };
  return {
    clients: BATCH_CLIENTS,
    messages: rows,
    failures: 0,
    seconds,
    msgPerSec: Math.round(rows / seconds),
    p50Ms: 0,
    p99Ms: 0,
  };
}

/** The middle value (the upper of the two middle ones for an even count, so it is always a measured run). */
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round2 = (x: number) => Number(x.toFixed(2));

/** Per client count: the run with the median throughput, and every run's msg/s. */
function summarise(
  runs: LoadResult[],
  clientCounts = CLIENTS,
): (LoadResult & { runsMsgPerSec: number[] })[] {
  return clientCounts.map((clients) => {
    const mine = runs.filter((r) => r.clients === clients);
    const mid = median(mine.map((r) => r.msgPerSec));
    const cpu = (mine as Measured1[]).filter((r) => r.cpuUsPerMsg);
    const cpuMedian =
      cpu.length === 0
        ? undefined
        : {
            server: median(cpu.map((r) => r.cpuUsPerMsg!.server)),
            postgres: median(cpu.map((r) => r.cpuUsPerMsg!.postgres)),
          };
    return {
      ...mine.find((r) => r.msgPerSec === mid)!,
      runsMsgPerSec: mine.map((r) => r.msgPerSec),
      ...(cpuMedian
        ? { medianCpuUsPerMsg: cpuMedian, runsCpuUsPerMsg: cpu.map((r) => r.cpuUsPerMsg!) }
        : {}),
    };
  });
}

interface Measured {
  name: string;
  server: ChildServer;
  database: string;
  runs: LoadResult[];
}

const measured1 = (m: Measured, run: () => Promise<LoadResult>) =>
  measured(m.server.child.pid!, m.database, run);

/** Rotates the order servers run in each round, so none always goes first. */
const rotate = <T>(items: T[], by: number) => items.map((_, i) => items[(i + by) % items.length]);

async function single(
  databases: BenchDatabase[],
  baselineDb: BenchDatabase,
  bareDb: BenchDatabase,
): Promise<unknown> {
  const measured: Measured[] = [];
  try {
    measured.push({
      name: 'bareBaseline',
      server: await startChild(
        bareMain,
        { DATABASE_URL: bareDb.url },
        await freePort(),
        /listening/,
      ),
      database: bareDb.name,
      runs: [],
    });
    measured.push({
      name: 'seedBaseline',
      server: await startChild(
        baselineMain,
        { DATABASE_URL: baselineDb.url },
        await freePort(),
        /listening/,
      ),
      database: baselineDb.name,
      runs: [],
    });
    for (const [i, config] of CONFIGS.entries()) {
      const server = await startChild(
        serverMain,
        { DATABASE_URL: databases[i].url, ORDINAL_LOG_FORMAT: 'json', ...config.env },
        await freePort(),
        /listening on/,
      );
      measured.push({ name: config.name, server, database: databases[i].name, runs: [] });
    }
    // Warm-up: JIT, pools, prepared plans (and, for the default window, its first 2,000 messages).
    for (const m of measured) await phase(m.server.baseUrl, 8, 2);
    const ratios: Record<string, number[]> = {
      concurrentOverGapless: [],
      concurrentOverGaplessWindowOff: [],
      gaplessOverSeed: [],
      gaplessOverBare: [],
      concurrentOverBare: [],
      windowDefaultOverOffGapless: [],
      windowDefaultOverOffConcurrent: [],
    };
    const cpuRatios: Record<string, number[]> = {
      concurrentOverGapless: [],
      concurrentOverGaplessWindowOff: [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const clients of CLIENTS) {
        for (const m of rotate(measured, round))
          m.runs.push(await measured1(m, () => phase(m.server.baseUrl, clients)));
      }
      const at = (name: string) =>
        measured.find((m) => m.name === name)!.runs.filter((r) => r.clients === AT)[round]
          .msgPerSec;
      ratios.concurrentOverGapless.push(at('concurrent') / at('gapless'));
      ratios.concurrentOverGaplessWindowOff.push(
        at('concurrentWindowOff') / at('gaplessWindowOff'),
      );
      ratios.gaplessOverSeed.push(at('gapless') / at('seedBaseline'));
      ratios.gaplessOverBare.push(at('gapless') / at('bareBaseline'));
      ratios.concurrentOverBare.push(at('concurrent') / at('bareBaseline'));
      ratios.windowDefaultOverOffGapless.push(at('gapless') / at('gaplessWindowOff'));
      ratios.windowDefaultOverOffConcurrent.push(at('concurrent') / at('concurrentWindowOff'));
      const cpuAt = (name: string) => {
        const r = measured.find((m) => m.name === name)!.runs.filter((x) => x.clients === AT)[
          round
        ] as Measured1;
        return r.cpuUsPerMsg!.server + r.cpuUsPerMsg!.postgres;
      };
      cpuRatios.concurrentOverGapless.push(cpuAt('concurrent') / cpuAt('gapless'));
      cpuRatios.concurrentOverGaplessWindowOff.push(
        cpuAt('concurrentWindowOff') / cpuAt('gaplessWindowOff'),
      );
    }
    const results = Object.fromEntries(measured.map((m) => [m.name, summarise(m.runs)]));
    const msgPerSecAt = Object.fromEntries(
      measured.map((m) => [m.name, summarise(m.runs).find((r) => r.clients === AT)!.msgPerSec]),
    );
    const coreShareAt = Object.fromEntries(
      measured.map((m) => [
        m.name,
        median(
          m.runs.filter((r) => r.clients === AT).map((r) => (r as Measured1).serverCoreShare ?? 0),
        ),
      ]),
    );
    return {
      route: 'PUT /api/events/message',
      note: 'the duplicate window (default 2,000) checks the first 2,000 messages after a start and then switches itself off; the warm-up passes them',
      results,
      [`msgPerSecAt${AT}`]: msgPerSecAt,
      [`ratiosAt${AT}`]: Object.fromEntries(
        Object.entries(ratios).map(([k, v]) => [k, round2(median(v))]),
      ),
      [`ratiosAt${AT}ByRound`]: Object.fromEntries(
        Object.entries(ratios).map(([k, v]) => [k, v.map(round2)]),
      ),
      [`serverCoreShareAt${AT}`]: coreShareAt,
      [`cpuPerMsgRatiosAt${AT}`]: Object.fromEntries(
        Object.entries(cpuRatios).map(([k, v]) => [k, round2(median(v))]),
      ),
      [`cpuPerMsgRatiosAt${AT}ByRound`]: Object.fromEntries(
        Object.entries(cpuRatios).map(([k, v]) => [k, v.map(round2)]),
      ),
      baselines: {
        seedBaseline:
          "the seed's write path: a mutex, then BEGIN, max(index)+1, INSERT, COMMIT per message",
        bareBaseline:
          "a bare Fastify route with Ordinal's group commit and multi-row insert and nothing else (support/bare-ingest-server.ts)",
      },
      goals: { concurrentOverGapless: 1, stretch: 1.3, gaplessOverBare: 0.5 },
    };
  } finally {
    for (const m of measured) await m.server.stop();
  }
}

async function batches(databases: BenchDatabase[], baselineDb: BenchDatabase): Promise<unknown> {
  const measured: Measured[] = [];
  const baseline: LoadResult[] = [];
  try {
    for (const [i, config] of CONFIGS.slice(0, 2).entries()) {
      const server = await startChild(
        serverMain,
        { DATABASE_URL: databases[i].url, ORDINAL_LOG_FORMAT: 'json', ...config.env },
        await freePort(),
        /listening on/,
      );
      measured.push({ name: config.name, server, database: databases[i].name, runs: [] });
    }
    for (const m of measured) await phase(m.server.baseUrl, BATCH_CLIENTS, 2, BATCH);
    const ratios: Record<string, number[]> = Object.fromEntries(
      measured.map((m) => [`${m.name}OverPg`, []]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      const steps: (() => void | Promise<void>)[] = [
        ...measured.map(
          (m) => async () =>
            void m.runs.push(
              await measured1(m, () => phase(m.server.baseUrl, BATCH_CLIENTS, MAX_SECONDS, BATCH)),
            ),
        ),
        () => void baseline.push(pgInsertPhase(baselineDb.url)),
      ];
      for (const step of rotate(steps, round)) await step();
      for (const m of measured)
        ratios[`${m.name}OverPg`].push(m.runs[round].msgPerSec / baseline[round].msgPerSec);
    }
    return {
      route: `POST /api/events/messages, ${BATCH} messages a request, ${BATCH_CLIENTS} clients`,
      baseline: `bare pg: ${BATCH_CLIENTS} connections committing ${BATCH}-row INSERTs (one statement each) into a copy of the messages table`,
      results: Object.fromEntries(
        measured.map((m) => [m.name, summarise(m.runs, [BATCH_CLIENTS])[0]]),
      ),
      pgBaseline: summarise(baseline, [BATCH_CLIENTS])[0],
      ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, round2(median(v))])),
      ratiosByRound: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, v.map(round2)])),
      goals: { msgPerSec: 40_000 },
    };
  } finally {
    for (const m of measured) await m.server.stop();
  }
}

/** BENCH_AUTH=jwt-rules: the static token without rules beside a JWT with 50 rules, same run. */
async function auth(databases: BenchDatabase[]): Promise<unknown> {
  const fixture = await authFixture();
  const servers: (Measured & { headers: Record<string, string> })[] = [];
  try {
    for (const [i, config] of [
      { name: 'staticNoRules', env: {}, headers: HEADERS },
      { name: 'jwtRules', env: fixture.env, headers: fixture.headers },
    ].entries()) {
      const server = await startChild(
        serverMain,
        { DATABASE_URL: databases[i].url, ORDINAL_LOG_FORMAT: 'json', ...config.env },
        await freePort(),
        /listening on/,
      );
      servers.push({
        name: config.name,
        server,
        database: databases[i].name,
        runs: [],
        headers: config.headers,
      });
    }
    for (const m of servers) await phase(m.server.baseUrl, 8, 2, 0, m.headers);
    const kinds = [
      ...CLIENTS.map((clients) => ({ key: `single${clients}`, clients, batch: 0 })),
      ...(hasWrk()
        ? [{ key: `batch${BATCH_CLIENTS}x${BATCH}`, clients: BATCH_CLIENTS, batch: BATCH }]
        : []),
    ];
    const figures: Record<string, Record<string, number[]>> = Object.fromEntries(
      kinds.map((k) => [k.key, { staticNoRules: [], jwtRules: [] }]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of kinds) {
        for (const m of rotate(servers, round)) {
          const result = await phase(
            m.server.baseUrl,
            kind.clients,
            MAX_SECONDS,
            kind.batch,
            m.headers,
          );
          if (result.failures > 0) throw new Error(`${m.name}: ${result.failures} requests failed`);
          figures[kind.key][m.name].push(result.msgPerSec);
        }
      }
    }
    return {
      what: 'gapless, the static token and no rules beside a JWT (ES256) and 50 access rules, same run, interleaved',
      msgPerSec: Object.fromEntries(
        Object.entries(figures).map(([k, v]) => [
          k,
          { staticNoRules: median(v.staticNoRules), jwtRules: median(v.jwtRules) },
        ]),
      ),
      ratioJwtRulesOverStatic: Object.fromEntries(
        Object.entries(figures).map(([k, v]) => [
          k,
          round2(median(v.jwtRules.map((x, i) => x / v.staticNoRules[i]))),
        ]),
      ),
      runs: figures,
      goal: 0.9,
    };
  } finally {
    for (const m of servers) await m.server.stop();
  }
}

async function main(): Promise<void> {
  const databases = await Promise.all(CONFIGS.map(() => createBenchDatabase()));
  const baselineDb = await createBenchDatabase();
  const bareDb = await createBenchDatabase();
  admin = new pg.Client({ connectionString: baselineDb.url });
  await admin.connect();
  try {
    // The baselines write to the same schema: let Ordinal create it first.
    for (const db of [baselineDb, bareDb]) await migrateWith(serverMain, db.url);
    const report: Record<string, unknown> = {
      benchmark: 'ingest',
      machine: {
        cpus: cpus().length,
        node: process.version,
        loadGenerator: hasWrk() ? 'wrk' : 'node http (install wrk for a lighter client)',
      },
      method: {
        rounds: ROUNDS,
        secondsPerPhase: MAX_SECONDS,
        figures:
          'median over the rounds; runsMsgPerSec lists every run; ratios are medians of same-round ratios',
      },
    };
    if (PARTS.has('single')) report.single = await single(databases, baselineDb, bareDb);
    if (PARTS.has('batches')) report.batches = await batches(databases, baselineDb);
    if (PARTS.has('auth')) report.auth = await auth(databases);
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await admin.end();
    for (const db of [...databases, baselineDb, bareDb]) await db.drop();
  }
}

await main();
