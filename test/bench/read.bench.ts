/**
 * `npm run bench:read` (B2): catch-up throughput of SSE streams over a log filled with
 * generate_series (test/bench/support/fill-log.ts): one stream, then ten at once, beside a
 * bare pg client paging the same table with the same query in the same run (the baseline).
 * The server runs as users run it: its own process (apps/eventstore/dist/main.js) with
 * default settings; this process is the reader (it only counts `event: message` lines).
 * `BENCH_SERVER=inprocess` runs the server inside this process instead (the old figure).
 * `BENCH_CPU_PROF=<dir>` writes the server's CPU profile there (node --cpu-prof).
 * `BENCH_AUTH=jwt-rules` also runs a second server on the same log with JWT authentication
 * and 50 access rules (support/auth-fixture.ts), its streams alternating with the static
 * token's, and reports `auth`: the same figures and their ratios (goal ≥ 0.9).
 * Prints one JSON object.
 */
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild } from './support/child-server.js';
import { countStream, type StreamCount } from './support/sse-count.js';
import { fillLog } from './support/fill-log.js';
import { pagePg } from './support/page-pg.js';
import { authFixture, type AuthFixture } from './support/auth-fixture.js';

const here = dirname(fileURLToPath(import.meta.url));
/** `BENCH_SERVER_MAIN`: another build's server (e.g. main's, for a before/after figure). */
const serverMain =
  process.env.BENCH_SERVER_MAIN ??
  join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const STREAMS = 10;
const MODE = process.env.BENCH_SERVER === 'inprocess' ? 'inprocess' : 'child';
const AUTH = { authorization: 'Bearer dev-ordinal-token' };
const WITH_AUTH = process.env.BENCH_AUTH === 'jwt-rules';

interface Server {
  baseUrl: string;
  stop(): Promise<void>;
}

async function startServer(
  databaseUrl: string,
  extra: Record<string, string> = {},
): Promise<Server> {
  // Default settings: only what a development server needs to start.
  const env: Record<string, string> = {
    ORDINAL_ENV: 'development',
    DATABASE_URL: databaseUrl,
    ORDINAL_LOG_FORMAT: 'json',
    ...extra,
  };
  if (MODE === 'child') {
    const profile = process.env.BENCH_CPU_PROF;
    const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
    return startChild(
      serverMain,
      env,
      18600 + Math.floor(Math.random() * 300),
      /listening on/,
      nodeArgs,
    );
  }
  const { createApp, loadConfig } = await import('@ordinal/eventstore');
  const app = await createApp(loadConfig({ ...env, PORT: '0' }), {
    logger: false,
    openApiUi: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { baseUrl: `http://127.0.0.1:${port}`, stop: () => app.close() };
}

const rate = (messages: number, ms: number) => Math.round((messages / ms) * 1000);
const best = <T extends { ms: number }>(runs: T[]): T =>
  runs.reduce((a, b) => (a.ms < b.ms ? a : b));
const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

async function repeat<T>(times: number, run: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < times; i++) results.push(await run());
  return results;
}

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  let server: Server | null = null;
  let authServer: Server | null = null;
  let fixture: AuthFixture | null = null;
  try {
    server = await startServer(db.url);
    if (WITH_AUTH) {
      fixture = await authFixture();
      authServer = await startServer(db.url, fixture.env);
    }
    const head = await fillLog(db.url, MESSAGES);
    const agent = new http.Agent({ keepAlive: true, maxSockets: STREAMS });
    const stream = () => countStream(server!.baseUrl, AUTH, 1, head, agent);
    const ten = async (): Promise<{ ms: number; runs: StreamCount[] }> => {
      const started = performance.now();
      const runs = await Promise.all(Array.from({ length: STREAMS }, stream));
      return { ms: performance.now() - started, runs };
    };

    const authStream = () => countStream(authServer!.baseUrl, fixture!.headers, 1, head, agent);
    const authTen = async (): Promise<{ ms: number; runs: StreamCount[] }> => {
      const started = performance.now();
      const runs = await Promise.all(Array.from({ length: STREAMS }, authStream));
      return { ms: performance.now() - started, runs };
    };

    // Warm-up: caches, JIT and pools on both sides.
    await pagePg(db.url, Math.min(head, 50_000));
    await countStream(server.baseUrl, AUTH, 1, Math.min(head, 50_000), agent);
    if (authServer)
      await countStream(authServer.baseUrl, fixture!.headers, 1, Math.min(head, 50_000), agent);

    // Baseline and Ordinal alternate, so a burst of load elsewhere hits both.
    const baselineRuns: { rows: number; ms: number }[] = [];
    const oneRuns: StreamCount[] = [];
    const tenRuns: { ms: number; runs: StreamCount[] }[] = [];
    const authOneRuns: StreamCount[] = [];
    const authTenRuns: { ms: number; runs: StreamCount[] }[] = [];
    for (let i = 0; i < RUNS; i++) {
      baselineRuns.push(await pagePg(db.url, head));
      // With BENCH_AUTH the two servers alternate which goes first.
      if (authServer && i % 2 === 1) authOneRuns.push(await authStream());
      oneRuns.push(...(await repeat(1, stream)));
      if (authServer && i % 2 === 0) authOneRuns.push(await authStream());
      if (authServer && i % 2 === 1) authTenRuns.push(await authTen());
      tenRuns.push(await ten());
      if (authServer && i % 2 === 0) authTenRuns.push(await authTen());
    }
    agent.destroy();
    const baseline = best(baselineRuns);
    const one = best(oneRuns);
    const many = best(tenRuns);
    for (const run of [
      ...oneRuns,
      ...tenRuns.flatMap((t) => t.runs),
      ...authOneRuns,
      ...authTenRuns.flatMap((t) => t.runs),
    ]) {
      if (run.messages !== head)
        throw new Error(`A stream delivered ${run.messages} of ${head} messages`);
    }
    const baselineRate = rate(baseline.rows, baseline.ms);
    const oneRate = rate(one.messages, one.ms);
    const tenRate = rate(head * STREAMS, many.ms);
    const auth = authServer
      ? (() => {
          const authOne = rate(head, best(authOneRuns).ms);
          const authTenRate = rate(head * STREAMS, best(authTenRuns).ms);
          return {
            what: 'a second server on the same log: JWT (ES256) + 50 access rules, a reader without admin, beside the static token and no rules',
            sseOneStreamMsgPerSec: authOne,
            sseTenStreamsTotalMsgPerSec: authTenRate,
            ratioOneStreamToStatic: ratio(authOne, oneRate),
            ratioTenStreamsToStatic: ratio(authTenRate, tenRate),
            goal: 0.9,
          };
        })()
      : undefined;
    console.log(
      JSON.stringify(
        {
          benchmark: 'read',
          date: new Date().toISOString(),
          machine: {
            cpus: cpus().length,
            node: process.version,
            server: MODE === 'child' ? serverMain : MODE,
            loadAverage1m: Number(loadavg()[0].toFixed(2)),
          },
          messages: head,
          runs: RUNS,
          baseline: {
            what: 'bare pg client paging the messages table (1,000 rows a page, same query)',
            msgPerSec: baselineRate,
            ms: Math.round(baseline.ms),
          },
          sseOneStream: {
            msgPerSec: oneRate,
            ms: Math.round(one.ms),
            megabytes: Number((one.bytes / 1e6).toFixed(1)),
          },
          sseTenStreams: {
            totalMsgPerSec: tenRate,
            perStreamMsgPerSec: Math.round(
              many.runs.reduce((sum, r) => sum + rate(r.messages, r.ms), 0) / STREAMS,
            ),
            ms: Math.round(many.ms),
          },
          ratioOneStreamToBaseline: ratio(oneRate, baselineRate),
          ratioTenStreamsTotalToBaseline: ratio(tenRate, baselineRate),
          ...(auth ? { auth } : {}),
          goals: { oneStreamRatio: 0.5, oneStreamStretchRatio: 0.8, tenStreamsTotalRatio: 1 },
          met: {
            oneStream: oneRate >= baselineRate * 0.5,
            oneStreamStretch: oneRate >= baselineRate * 0.8,
            tenStreams: tenRate >= baselineRate,
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await server?.stop();
    await authServer?.stop();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
