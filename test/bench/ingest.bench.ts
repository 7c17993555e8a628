/**
 * `npm run bench:ingest` (B1): REST publish at 1, 8 and 32 keep-alive clients against
 * Ordinal and, in the same run on the same PostgreSQL, against the seed's write path (one
 * transaction per message behind a process-wide mutex). Prints one JSON object.
 *
 * The machine is shared and noisy, so both servers run side by side and their phases are
 * interleaved: each round measures every client count on both, alternating which goes
 * first, and the report gives each figure's median over the rounds (every run is listed
 * too). The ratio at 32 clients is the median of the rounds' own ratios.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './support/bench-database.js';
import { runLoad, type LoadResult } from './support/http-load.js';
import { startChild, type ChildServer } from './support/child-server.js';
import { hasWrk, runWrk } from './support/wrk-load.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const baselineMain = join(here, 'support', 'seed-baseline-server.js');
const CLIENTS = [1, 8, 32];
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const PER_PHASE = Number(process.env.BENCH_MESSAGES ?? 20_000);
const MAX_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const headers = { authorization: 'Bearer dev-ordinal-token' };
const body = (n: number) => JSON.stringify({ messageType: 'OrderPlaced', userId: `customer-${n % 97}`, content: { orderId: `o-${n}`, total: 49.9, lines: [{ sku: 'rocket', qty: 1 }] } });

let phaseCounter = 0;

/** One phase: `clients` keep-alive clients publishing for MAX_SECONDS (or PER_PHASE messages without wrk). */
async function phase(baseUrl: string, clients: number, seconds = MAX_SECONDS): Promise<LoadResult> {
  const url = `${baseUrl}/api/events/message`;
  phaseCounter += 1;
  if (hasWrk()) return runWrk({ url, clients, seconds, headers, bodyPrefix: `p${phaseCounter}` });
  const total = clients === 1 ? Math.min(PER_PHASE, 5_000) : PER_PHASE;
  return runLoad({ url, clients, total, maxSeconds: seconds, headers, body: (n) => body(phaseCounter * 1e7 + n) });
}

/** The middle value (the upper of the two middle ones for an even count, so it is always a measured run). */
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Per client count: the run with the median throughput, and every run's msg/s. */
function summarise(runs: LoadResult[]): (LoadResult & { runsMsgPerSec: number[] })[] {
  return CLIENTS.map((clients) => {
    const mine = runs.filter((r) => r.clients === clients);
    const mid = median(mine.map((r) => r.msgPerSec));
    return { ...mine.find((r) => r.msgPerSec === mid)!, runsMsgPerSec: mine.map((r) => r.msgPerSec) };
  });
}

async function main(): Promise<void> {
  const ordinalDb = await createBenchDatabase();
  const baselineDb = await createBenchDatabase();
  try {
    // The baseline writes to the same schema: let Ordinal create it first.
    const schema = await startChild(serverMain, { DATABASE_URL: baselineDb.url, ORDINAL_LOG_FORMAT: 'json' }, 18590, /listening on/);
    await schema.stop();
    const baseline = await startChild(baselineMain, { DATABASE_URL: baselineDb.url }, 18591, /listening/);
    let ordinal: ChildServer | undefined;
    const ratiosAt32: number[] = [];
    const servers: [ChildServer, LoadResult[]][] = [[baseline, []]];
    try {
      ordinal = await startChild(serverMain, { DATABASE_URL: ordinalDb.url, ORDINAL_LOG_FORMAT: 'json', ORDINAL_DUPLICATE_WINDOW: '0' }, 18592, /listening on/);
      servers.push([ordinal, []]);
      // Warm-up: JIT, pools, prepared plans.
      for (const [server] of servers) await phase(server.baseUrl, 8, 2);
      for (let round = 0; round < ROUNDS; round++) {
        for (const clients of CLIENTS) {
          const order = round % 2 === 0 ? servers : [...servers].reverse();
          for (const [server, results] of order) results.push(await phase(server.baseUrl, clients));
        }
        const at = (results: LoadResult[]) => results.filter((r) => r.clients === 32)[round].msgPerSec;
        ratiosAt32.push(at(servers[1][1]) / at(servers[0][1]));
      }
    } finally {
      await baseline.stop();
      await ordinal?.stop();
    }
    const ordinalResults = summarise(servers[1][1]);
    const baselineResults = summarise(servers[0][1]);

    const at32 = (r: LoadResult[]) => r.find((x) => x.clients === 32)!.msgPerSec;
    console.log(JSON.stringify({
      benchmark: 'ingest',
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version, loadGenerator: hasWrk() ? 'wrk' : 'node http (install wrk for a lighter client)' },
      method: { rounds: ROUNDS, secondsPerPhase: MAX_SECONDS, figures: 'median over the rounds; runsMsgPerSec lists every run' },
      ordinal: ordinalResults,
      seedBaseline: baselineResults,
      msgPerSecAt32: at32(ordinalResults),
      ratioAt32: Number(median(ratiosAt32).toFixed(2)),
      ratiosAt32ByRound: ratiosAt32.map((r) => Number(r.toFixed(2))),
      goals: { ratioAt32: 8, msgPerSecAt32: 10_000 },
    }, null, 2));
  } finally {
    await ordinalDb.drop();
    await baselineDb.drop();
  }
}

await main();
