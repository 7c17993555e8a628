/**
 * `npm run bench:read` (B2): catch-up throughput of SSE streams over a log of 200,000
 * messages (one stream, then 10 at once), beside a bare pg client paging the same table with
 * the same query in the same run. The server runs in this process by default (the readers
 * only count bytes); `BENCH_SERVER=child` runs it as its own process instead, which on a
 * 2-core machine adds a third busy process beside PostgreSQL. Prints one JSON object.
 */
import http from 'node:http';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild } from './support/child-server.js';
import { countStream } from './support/sse-count.js';
import { fillLog } from './support/fill-log.js';
import { pagePg } from './support/page-pg.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
const STREAMS = 10;
const MODE = process.env.BENCH_SERVER === 'child' ? 'child' : 'inprocess';
const AUTH = { authorization: 'Bearer dev-ordinal-token' };

interface Server {
  baseUrl: string;
  stop(): Promise<void>;
}

async function startServer(databaseUrl: string): Promise<Server> {
  const env = { ORDINAL_ENV: 'development', DATABASE_URL: databaseUrl, ORDINAL_LOG_FORMAT: 'json', ORDINAL_DUPLICATE_WINDOW: '0' };
  if (MODE === 'child') return startChild(serverMain, env, 18600 + Math.floor(Math.random() * 300), /listening on/);
  const { createApp, loadConfig } = await import('@ordinal/eventstore');
  const app = await createApp(loadConfig({ ...env, PORT: '0' }), { logger: false, openApiUi: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { baseUrl: `http://127.0.0.1:${port}`, stop: () => app.close() };
}

const rate = (messages: number, ms: number) => Math.round((messages / ms) * 1000);

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  let server: Server | null = null;
  try {
    server = await startServer(db.url);
    const head = await fillLog(db.url, MESSAGES);
    const agent = new http.Agent({ keepAlive: true, maxSockets: STREAMS });

    // Warm-up: caches, JIT and pools on both sides.
    await pagePg(db.url, Math.min(head, 50_000));
    await countStream(server.baseUrl, AUTH, 1, Math.min(head, 50_000), agent);

    const baselineRuns = [await pagePg(db.url, head), await pagePg(db.url, head)];
    const baseline = baselineRuns.reduce((a, b) => (a.ms < b.ms ? a : b));
    const oneRuns = [await countStream(server.baseUrl, AUTH, 1, head, agent), await countStream(server.baseUrl, AUTH, 1, head, agent)];
    const one = oneRuns.reduce((a, b) => (a.ms < b.ms ? a : b));
    const started = performance.now();
    const many = await Promise.all(Array.from({ length: STREAMS }, () => countStream(server!.baseUrl, AUTH, 1, head, agent)));
    const manyMs = performance.now() - started;
    agent.destroy();

    for (const run of [one, ...many]) if (run.messages !== head) throw new Error(`A stream delivered ${run.messages} of ${head} messages`);
    const baselineRate = rate(baseline.rows, baseline.ms);
    const oneRate = rate(one.messages, one.ms);
    console.log(
      JSON.stringify(
        {
          benchmark: 'read',
          machine: { cpus: cpus().length, node: process.version, server: MODE },
          messages: head,
          baseline: { what: 'bare pg client paging the messages table (1,000 rows a page, same query)', msgPerSec: baselineRate, ms: Math.round(baseline.ms) },
          sseOneStream: { msgPerSec: oneRate, ms: Math.round(one.ms), megabytes: Number((one.bytes / 1e6).toFixed(1)) },
          sseTenStreams: {
            totalMsgPerSec: rate(head * STREAMS, manyMs),
            perStreamMsgPerSec: Math.round(many.reduce((sum, r) => sum + rate(r.messages, r.ms), 0) / STREAMS),
            ms: Math.round(manyMs),
          },
          ratioOneStreamToBaseline: Number((oneRate / baselineRate).toFixed(2)),
          goals: { oneStreamMsgPerSec: 50_000, ratioToBaseline: 0.5 },
          met: { oneStream: oneRate >= 50_000, ratio: oneRate >= baselineRate / 2 },
        },
        null,
        2,
      ),
    );
  } finally {
    await server?.stop();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
