/**
 * `npm run bench:tracing` (issue 16): REST publish at 8 and 32 keep-alive clients (wrk) against
 * two servers in their own processes on the same PostgreSQL, in the same run: one with no
 * OpenTelemetry SDK (the default: the API's no-op tracer) and one started with an SDK
 * (`--import` of test/bench/support/otel-register.js: batch processor, dropping exporter),
 * so every request records its HTTP, append and flush spans. Phases alternate which server
 * goes first; figures are medians over the rounds, throughput and the server's CPU time per
 * message (from /proc: steadier than throughput on a shared machine). Prints one JSON object.
 *
 * BENCH_BASELINE_MAIN=<path to another build's apps/eventstore/dist/main.js> adds a third
 * server (the build before correlation ids, say) to show what the ids cost without an SDK.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createBenchDatabase, type BenchDatabase } from './support/bench-database.js';
import { runLoad, type LoadResult } from './support/http-load.js';
import { startChild, type ChildServer } from './support/child-server.js';
import { hasWrk, runWrk } from './support/wrk-load.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const register = pathToFileURL(join(here, 'support', 'otel-register.js')).href;
const CLIENTS = [8, 32];
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const headers = { authorization: 'Bearer dev-ordinal-token' };
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

let phaseCounter = 0;
async function phase(baseUrl: string, clients: number, seconds = SECONDS): Promise<LoadResult> {
  const url = `${baseUrl}/api/events/message`;
  phaseCounter += 1;
  if (hasWrk()) return runWrk({ url, clients, seconds, headers, bodyPrefix: `t${phaseCounter}` });
  return runLoad({
    url,
    clients,
    total: 20_000,
    maxSeconds: seconds,
    headers,
    body: (n) => JSON.stringify({ messageType: 'OrderPlaced', content: { run: phaseCounter, n } }),
  });
}

/**
 * CPU seconds (user + system) a process has used, from /proc (Linux; clock ticks of 1/100 s).
 * CPU per message is what a busy shared machine disturbs least: throughput halves when another
 * engineer's suite runs, the work each request costs does not.
 */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Variant {
  name: string;
  server: ChildServer;
  db: BenchDatabase;
  results: (LoadResult & { cpuUsPerMessage: number })[];
}

async function main(): Promise<void> {
  const env = { ORDINAL_LOG_FORMAT: 'json', ORDINAL_DUPLICATE_WINDOW: '0', AMQP_URL: '' };
  const plan: { name: string; script: string; extra: Record<string, string> }[] = [
    { name: 'noSdk', script: serverMain, extra: {} },
    {
      name: 'sdk',
      script: serverMain,
      extra: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${register}`.trim() },
    },
  ];
  const before = process.env.BENCH_BASELINE_MAIN;
  if (before && existsSync(before)) plan.push({ name: 'baselineBuild', script: before, extra: {} });
  const variants: Variant[] = [];
  const dbs: BenchDatabase[] = [];
  try {
    let port = 18690;
    for (const p of plan) {
      const db = await createBenchDatabase();
      dbs.push(db);
      const server = await startChild(
        p.script,
        { ...env, ...p.extra, DATABASE_URL: db.url },
        port++,
        /listening on/,
      );
      variants.push({ name: p.name, server, db, results: [] });
    }
    for (const v of variants) await phase(v.server.baseUrl, 8, 2); // warm-up: JIT, pools, plans
    const ratios: Record<number, number[]> = { 8: [], 32: [] };
    const cpuRatios: Record<number, number[]> = { 8: [], 32: [] };
    const idsCpuRatios: Record<number, number[]> = { 8: [], 32: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const clients of CLIENTS) {
        const order = round % 2 === 0 ? variants : [...variants].reverse();
        const got = new Map<string, number>();
        for (const v of order) {
          const before = cpuSeconds(v.server.child.pid);
          const result = await phase(v.server.baseUrl, clients);
          const cpuUsPerMessage = Math.round(
            ((cpuSeconds(v.server.child.pid) - before) * 1e6) / Math.max(1, result.messages),
          );
          v.results.push({ ...result, cpuUsPerMessage });
          got.set(v.name, result.msgPerSec);
          got.set(`${v.name}Cpu`, cpuUsPerMessage);
        }
        ratios[clients].push(got.get('sdk')! / got.get('noSdk')!);
        cpuRatios[clients].push(got.get('sdkCpu')! / got.get('noSdkCpu')!);
        if (got.has('baselineBuildCpu'))
          idsCpuRatios[clients].push(got.get('noSdkCpu')! / got.get('baselineBuildCpu')!);
      }
    }
    const summary = Object.fromEntries(
      variants.map((v) => [
        v.name,
        Object.fromEntries(
          CLIENTS.map((c) => {
            const runs = v.results.filter((r) => r.clients === c);
            const mid = median(runs.map((r) => r.msgPerSec));
            const run = runs.find((r) => r.msgPerSec === mid)!;
            return [
              `at${c}`,
              {
                msgPerSec: run.msgPerSec,
                p50Ms: run.p50Ms,
                p99Ms: run.p99Ms,
                failures: run.failures,
                cpuUsPerMessage: median(runs.map((r) => r.cpuUsPerMessage)),
                runsMsgPerSec: runs.map((r) => r.msgPerSec),
                runsCpuUsPerMessage: runs.map((r) => r.cpuUsPerMessage),
              },
            ];
          }),
        ),
      ]),
    );
    console.log(
      JSON.stringify(
        {
          benchmark: 'tracing',
          machine: {
            cpus: (await import('node:os')).cpus().length,
            load: (await import('node:os')).loadavg().map((l) => Number(l.toFixed(2))),
            node: process.version,
            loadGenerator: hasWrk() ? 'wrk' : 'node http',
          },
          method: {
            rounds: ROUNDS,
            secondsPerPhase: SECONDS,
            figures: "median over the rounds; sdkToNoSdk is the median of the rounds' own ratios",
          },
          ...summary,
          sdkToNoSdk: Object.fromEntries(
            CLIENTS.map((c) => [`at${c}`, Number(median(ratios[c]).toFixed(3))]),
          ),
          sdkToNoSdkByRound: Object.fromEntries(
            CLIENTS.map((c) => [`at${c}`, ratios[c].map((r) => Number(r.toFixed(3)))]),
          ),
          // Server CPU per message, SDK over no SDK (> 1: tracing costs that much more per message).
          cpuSdkToNoSdk: Object.fromEntries(
            CLIENTS.map((c) => [`at${c}`, Number(median(cpuRatios[c]).toFixed(3))]),
          ),
          ...(idsCpuRatios[8].length > 0
            ? {
                cpuNoSdkToBaselineBuild: Object.fromEntries(
                  CLIENTS.map((c) => [`at${c}`, Number(median(idsCpuRatios[c]).toFixed(3))]),
                ),
              }
            : {}),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const v of variants) await v.server.stop();
    for (const db of dbs) await db.drop();
  }
}

await main();
