/**
 * `npm run bench:replica` (issue 15, replica readers): a real PostgreSQL streaming replica of
 * the local server (pg_basebackup, another port), a primary server on the primary and a
 * replica reader (ORDINAL_ROLE=replica-reader, default settings) on the replica, each in its
 * own process. Measures, each beside its baseline in the same run:
 * - replica lag: a message acknowledged by the primary server until its row is visible on the
 *   replica (polled with a 1 ms pause);
 * - live delivery: publish on the primary, arrival on an SSE stream of the primary server
 *   (NOTIFY, the baseline) and of the replica reader (its poll, no NOTIFY), in both orderings;
 * - catch-up: one SSE stream over the same log from the primary server and from the replica reader.
 * Prints one JSON object.
 */
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createBenchDatabase, type BenchDatabase } from './support/bench-database.js';
import { startChild, type ChildServer } from './support/child-server.js';
import { countStream } from './support/sse-count.js';
import { fillLog } from './support/fill-log.js';
import { startStreamingReplica, type StreamingReplica } from './support/streaming-replica.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const LIVE = Number(process.env.BENCH_LIVE_MESSAGES ?? 200);
const CATCH_UP = Number(process.env.BENCH_MESSAGES ?? 40_000);
const AUTH = { authorization: 'Bearer dev-ordinal-token' };

let nextPort = 18900 + Math.floor(Math.random() * 400);
const startServer = (databaseUrl: string, env: Record<string, string> = {}) =>
  startChild(
    serverMain,
    {
      ORDINAL_ENV: 'development',
      DATABASE_URL: databaseUrl,
      ORDINAL_LOG_FORMAT: 'json',
      AMQP_URL: '',
      ...env,
    },
    nextPort++,
    /listening on/,
  );

function percentiles(values: number[]): { p50: number; p99: number; max: number; n: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10;
  return { p50: at(0.5), p99: at(0.99), max: at(1), n: sorted.length };
}

async function publish(baseUrl: string, content: unknown): Promise<number> {
  const res = await fetch(`${baseUrl}/api/events/message`, {
    method: 'PUT',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ messageType: 'ReplicaBench', content }),
  });
  if (res.status !== 201) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: number }).id;
}

async function head(baseUrl: string): Promise<number> {
  const res = await fetch(`${baseUrl}/api/events/head`, { headers: AUTH });
  return ((await res.json()) as { head: number }).head;
}

/** A live SSE stream that records when each message index arrived. */
function watch(
  baseUrl: string,
  startIndex: number,
): Promise<{ arrivals: Map<number, number>; close(): void }> {
  return new Promise((resolve, reject) => {
    const arrivals = new Map<number, number>();
    let buffer = '';
    const request = http.get(
      `${baseUrl}/api/events/stream?startIndex=${startIndex}`,
      { headers: AUTH },
      (response) => {
        if (response.statusCode !== 200)
          return reject(new Error(`stream answered ${response.statusCode}`));
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const now = performance.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (\d+)$/m.exec(block);
            if (id && /^event: message$/m.test(block)) arrivals.set(Number(id[1]), now);
          }
        });
        resolve({ arrivals, close: () => request.destroy() });
      },
    );
    request.on('error', reject);
  });
}

async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Cleanup {
  servers: Array<() => Promise<void>>;
  databases: Array<() => Promise<void>>;
}

/** Replica lag and live delivery in one ordering mode. */
async function live(
  replica: StreamingReplica,
  ordering: 'gapless' | 'concurrent',
  cleanup: Cleanup,
) {
  const db = await createBenchDatabase();
  cleanup.databases.push(() => db.drop());
  const primary = await startServer(db.url, { ORDINAL_ORDERING: ordering });
  cleanup.servers.push(() => primary.stop());
  await replica.caughtUp(30_000);
  const reader = await startServer(replica.url(db.name), {
    ORDINAL_ORDERING: ordering,
    ORDINAL_ROLE: 'replica-reader',
  });
  cleanup.servers.push(() => reader.stop());
  const from = (await head(primary.baseUrl)) + 1;
  await until(
    async () => (await head(reader.baseUrl)) >= from - 1,
    10_000,
    'the replica reader to catch up',
  );
  const onPrimary = await watch(primary.baseUrl, from);
  const onReplica = await watch(reader.baseUrl, from);
  const probe = new pg.Client({ connectionString: replica.url(db.name) });
  await probe.connect();
  const sent = new Map<number, number>();
  const lag: number[] = [];
  try {
    for (let i = 0; i < LIVE; i++) {
      const id = await publish(primary.baseUrl, { i });
      const acked = performance.now();
      sent.set(id, acked);
      // Lag: acknowledged by the primary server until the row is visible on the replica.
      for (;;) {
        const { rows } = await probe.query('SELECT 1 FROM messages WHERE index = $1', [id]);
        if (rows.length > 0) break;
        await new Promise((r) => setTimeout(r, 1));
      }
      lag.push(performance.now() - acked);
      // A random pause, so that publishing does not fall into step with the replica's poll.
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
    }
    const last = Math.max(...sent.keys());
    await until(
      () => onPrimary.arrivals.has(last) && onReplica.arrivals.has(last),
      10_000,
      'the last live message on both streams',
    );
  } finally {
    await probe.end();
    onPrimary.close();
    onReplica.close();
  }
  const latencies = (arrivals: Map<number, number>) =>
    [...sent].map(([id, at]) => (arrivals.get(id) ?? Number.NaN) - at);
  const primaryLive = latencies(onPrimary.arrivals);
  const replicaLive = latencies(onReplica.arrivals);
  if ([...primaryLive, ...replicaLive].some((v) => Number.isNaN(v)))
    throw new Error('a live message did not arrive on a stream');
  return {
    replicaLagMs: percentiles(lag),
    liveDeliveryMs: {
      primaryServer: percentiles(primaryLive),
      replicaReader: percentiles(replicaLive),
    },
  };
}

/** One SSE stream's catch-up over the same log, from the primary server and from the replica reader (gapless). */
async function catchUp(replica: StreamingReplica, cleanup: Cleanup) {
  const db: BenchDatabase = await createBenchDatabase();
  cleanup.databases.push(() => db.drop());
  const primary: ChildServer = await startServer(db.url);
  cleanup.servers.push(() => primary.stop());
  const top = await fillLog(db.url, CATCH_UP);
  await replica.caughtUp(60_000);
  const reader = await startServer(replica.url(db.name), { ORDINAL_ROLE: 'replica-reader' });
  cleanup.servers.push(() => reader.stop());
  await until(
    async () => (await head(reader.baseUrl)) >= top,
    30_000,
    'the replica reader to see the filled log',
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  try {
    // Warm-up, then the better of two runs each, alternating.
    await countStream(primary.baseUrl, AUTH, 1, top, agent);
    await countStream(reader.baseUrl, AUTH, 1, top, agent);
    const runs = { primary: [] as number[], replica: [] as number[] };
    for (let i = 0; i < 2; i++) {
      const p = await countStream(primary.baseUrl, AUTH, 1, top, agent);
      const r = await countStream(reader.baseUrl, AUTH, 1, top, agent);
      if (p.messages !== top || r.messages !== top)
        throw new Error(`a stream delivered ${p.messages}/${r.messages} of ${top}`);
      runs.primary.push(p.ms);
      runs.replica.push(r.ms);
    }
    const rate = (ms: number[]) => Math.round((top / Math.min(...ms)) * 1000);
    const primaryRate = rate(runs.primary);
    const replicaRate = rate(runs.replica);
    return {
      messages: top,
      primaryServerMsgPerSec: primaryRate,
      replicaReaderMsgPerSec: replicaRate,
      ratioReplicaToPrimary: Number((replicaRate / primaryRate).toFixed(2)),
    };
  } finally {
    agent.destroy();
  }
}

async function main(): Promise<void> {
  const servers: Array<() => Promise<void>> = [];
  const databases: Array<() => Promise<void>> = [];
  const cleanup = { servers, databases };
  let replica: StreamingReplica | null = null;
  const load = loadavg()[0];
  try {
    const made = performance.now();
    replica = await startStreamingReplica();
    const setupMs = Math.round(performance.now() - made);
    const gapless = await live(replica, 'gapless', cleanup);
    const concurrent = await live(replica, 'concurrent', cleanup);
    const catchup = await catchUp(replica, cleanup);
    console.log(
      JSON.stringify(
        {
          benchmark: 'replica',
          date: new Date().toISOString(),
          machine: {
            cpus: cpus().length,
            node: process.version,
            loadAverage1mAtStart: Number(load.toFixed(2)),
          },
          replicaSetupMs: setupMs,
          settings: {
            replicaLivePollMs: 200,
            liveMessages: LIVE,
            publishPauseMs: '20-100 (random)',
          },
          gapless,
          concurrent,
          catchUp: catchup,
        },
        null,
        2,
      ),
    );
  } finally {
    // Servers first, then the replica (its sessions would hold up the drops' replay), then the databases.
    for (const stop of servers) await stop().catch(() => undefined);
    await replica?.stop();
    for (const drop of databases) await drop().catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
