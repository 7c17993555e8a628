/**
 * `npm run bench:personal-ab` (docs/personal-data.md): this checkout's server against another
 * build's (`BENCH_BASELINE`, the path of another checkout, built with `npx tsc -b`), both up at
 * once, each on its own database, the same work alternated between them round by round, so
 * both see the same machine (a shared machine's load moves more between two runs minutes apart
 * than a change does):
 * - publish at 32 clients for BENCH_LOAD_SECONDS (default 5) per round: a type without a rule,
 *   the same messages with two personal fields (1,000 known subjects), a new subject in each;
 * - SSE catch-up of BENCH_MESSAGES (default 20,000) plain and as many sealed messages by a
 *   reader with the `personal` scope (each field decrypted).
 * BENCH_ROUNDS rounds (default 5); medians. Beside each catch-up's time, the CPU its server
 * used for it (utime + stime from /proc, per message): on a machine other work shares, a
 * catch-up's time says how much of a core the server got as much as what it cost.
 * BENCH_SSE_ONLY=1 leaves out the publish rounds. Prints one JSON object.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, type BenchDatabase } from './support/bench-database.js';
import { startChild, type ChildServer } from './support/child-server.js';
import { runLoad } from './support/http-load.js';
import { countStream } from './support/sse-count.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20_000);
const SSE_ONLY = process.env.BENCH_SSE_ONLY === '1';
const ADMIN = { authorization: 'Bearer dev-ordinal-token' };
const PRIVY = { authorization: 'Bearer privy-bench-secret' };
const RULE = { subject: '/customerId', fields: ['/email', '/address'] };

const content = (n: number, subject: string) => ({
  customerId: subject,
  email: `person-${n}@example.com`,
  address: { street: `${n} Long Road`, city: 'Lyon' },
  plan: 'gold',
});

async function call(baseUrl: string, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { ...ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

interface Side {
  db: BenchDatabase;
  server: ChildServer;
}

/** A checkout's server on a database of its own, with the rule and the catch-up's messages. */
async function start(checkout: string, port: number): Promise<Side> {
  const db = await createBenchDatabase();
  const server = await startChild(
    join(checkout, 'apps', 'eventstore', 'dist', 'main.js'),
    {
      ORDINAL_ENV: 'development',
      DATABASE_URL: db.url,
      ORDINAL_LOG_FORMAT: 'json',
      ORDINAL_DUPLICATE_WINDOW: '0',
      ORDINAL_MASTER_KEY: randomBytes(32).toString('base64'),
      ORDINAL_TOKENS: 'privy:privy-bench-secret:read+personal',
      AMQP_URL: '',
    },
    port,
    /listening on/,
  );
  await call(server.baseUrl, 'PUT', '/api/personal-data/rules/CustomerRegistered', RULE);
  // Indices 1..MESSAGES plain, MESSAGES+1..2*MESSAGES sealed
  for (const messageType of ['CustomerPlain', 'CustomerRegistered'])
    for (let i = 0; i < MESSAGES; i += 500)
      await call(server.baseUrl, 'POST', '/api/events/messages', {
        messages: Array.from({ length: Math.min(500, MESSAGES - i) }, (_, k) => ({
          messageType,
          content: content(i + k, `c-${(i + k) % 1000}`),
        })),
      });
  return { db, server };
}

const publish = (side: Side, messageType: string, subject: (n: number) => string) =>
  runLoad({
    url: `${side.server.baseUrl}/api/events/message`,
    clients: 32,
    total: Number.MAX_SAFE_INTEGER,
    maxSeconds: SECONDS,
    headers: ADMIN,
    body: (n) => JSON.stringify({ messageType, content: content(n, subject(n)) }),
  }).then((r) => r.msgPerSec);

/** CPU time a process has used, in µs (/proc/<pid>/stat: utime + stime, in clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** A catch-up of [from, to] and the server's CPU per message for it. */
async function catchUp(side: Side, from: number, to: number, agent: http.Agent) {
  const pid = side.server.child.pid!;
  const before = cpuMicros(pid);
  const { ms } = await countStream(side.server.baseUrl, PRIVY, from, to, agent);
  return { ms, cpuMicros: (cpuMicros(pid) - before) / (to - from + 1) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

async function main(): Promise<void> {
  const baseline = process.env.BENCH_BASELINE;
  if (!baseline) throw new Error('Set BENCH_BASELINE to another checkout (built) to compare with');
  const port = 19800 + Math.floor(Math.random() * 100);
  const sides = {
    baseline: await start(resolve(baseline), port),
    current: await start(join(here, '..', '..', '..'), port + 100),
  };
  const agent = new http.Agent({ keepAlive: false });
  type Runs = Record<
    | 'plain'
    | 'sealed'
    | 'newSubjects'
    | 'sseMsPlain'
    | 'sseMsSealed'
    | 'sseCpuPlain'
    | 'sseCpuSealed',
    number[]
  >;
  const runsOf = (): Runs => ({
    plain: [],
    sealed: [],
    newSubjects: [],
    sseMsPlain: [],
    sseMsSealed: [],
    sseCpuPlain: [],
    sseCpuSealed: [],
  });
  const runs: Record<keyof typeof sides, Runs> = { baseline: runsOf(), current: runsOf() };
  const loads: number[] = [];
  try {
    if (!SSE_ONLY)
      for (const side of Object.values(sides))
        await publish(side, 'Warmup', (n) => `c-${n % 1000}`);
    for (let round = 0; round < ROUNDS; round++) {
      const order =
        round % 2 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const);
      for (const name of order) {
        const side = sides[name];
        const r = runs[name];
        if (!SSE_ONLY) {
          r.plain.push(await publish(side, 'CustomerPlain', (n) => `c-${n % 1000}`));
          r.sealed.push(await publish(side, 'CustomerRegistered', (n) => `c-${n % 1000}`));
          r.newSubjects.push(await publish(side, 'CustomerRegistered', (n) => `new-${round}-${n}`));
        }
        const plain = await catchUp(side, 1, MESSAGES, agent);
        const sealed = await catchUp(side, MESSAGES + 1, 2 * MESSAGES, agent);
        r.sseMsPlain.push(plain.ms);
        r.sseMsSealed.push(sealed.ms);
        r.sseCpuPlain.push(plain.cpuMicros);
        r.sseCpuSealed.push(sealed.cpuMicros);
      }
      loads.push(Number(loadavg()[0].toFixed(2)));
    }
  } finally {
    for (const side of Object.values(sides)) {
      await side.server.stop();
      await side.db.drop();
    }
  }
  const summary = (r: Runs) => ({
    ...(SSE_ONLY
      ? {}
      : {
          publishWithoutRules: median(r.plain),
          publishWithTwoPersonalFields: median(r.sealed),
          publishNewSubjects: median(r.newSubjects),
          // Ratios within a round (the same moment), then their median
          ratio: Number(median(r.sealed.map((s, i) => s / r.plain[i])).toFixed(2)),
          ratioNewSubjects: Number(median(r.newSubjects.map((s, i) => s / r.plain[i])).toFixed(2)),
        }),
    sseMsgPerSecPlain: Math.round(MESSAGES / (median(r.sseMsPlain) / 1000)),
    sseMsgPerSecWithPersonalScope: Math.round(MESSAGES / (median(r.sseMsSealed) / 1000)),
    sseRatio: Number(median(r.sseMsPlain.map((p, i) => p / r.sseMsSealed[i])).toFixed(2)),
    sseExtraMicrosPerMessage: Number(
      (((median(r.sseMsSealed) - median(r.sseMsPlain)) * 1000) / MESSAGES).toFixed(1),
    ),
    // The server's CPU per message (10 ms ticks over a whole catch-up), and the ratio it gives
    sseCpuMicrosPerMessagePlain: Number(median(r.sseCpuPlain).toFixed(1)),
    sseCpuMicrosPerMessageWithPersonalScope: Number(median(r.sseCpuSealed).toFixed(1)),
    sseCpuExtraMicrosPerMessage: Number(
      median(r.sseCpuSealed.map((s, i) => s - r.sseCpuPlain[i])).toFixed(1),
    ),
    sseCpuRatio: Number(median(r.sseCpuPlain.map((p, i) => p / r.sseCpuSealed[i])).toFixed(2)),
  });
  console.log(
    JSON.stringify(
      {
        benchmark: 'personal-ab',
        date: new Date().toISOString(),
        rounds: ROUNDS,
        loadSeconds: SECONDS,
        messages: MESSAGES,
        loadAverages: loads,
        baseline: { checkout: resolve(baseline), ...summary(runs.baseline) },
        current: summary(runs.current),
      },
      null,
      2,
    ),
  );
}

await main();
