/**
 * `npm run bench:ingest` (B1): REST publish at 1, 8 and 32 keep-alive clients against
 * Ordinal and, in the same run on the same PostgreSQL, against the seed's write path (one
 * transaction per message behind a process-wide mutex). Prints one JSON object.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './support/bench-database.js';
import { runLoad, type LoadResult } from './support/http-load.js';
import { startChild } from './support/child-server.js';
import { hasWrk, runWrk } from './support/wrk-load.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const baselineMain = join(here, 'support', 'seed-baseline-server.js');
const CLIENTS = [1, 8, 32];
const PER_PHASE = Number(process.env.BENCH_MESSAGES ?? 20_000);
const MAX_SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const headers = { authorization: 'Bearer dev-ordinal-token' };
const body = (n: number) => JSON.stringify({ messageType: 'OrderPlaced', userId: `customer-${n % 97}`, content: { orderId: `o-${n}`, total: 49.9, lines: [{ sku: 'rocket', qty: 1 }] } });

async function phases(baseUrl: string): Promise<LoadResult[]> {
  const results: LoadResult[] = [];
  if (hasWrk()) {
    const url = `${baseUrl}/api/events/message`;
    runWrk({ url, clients: 8, seconds: 2, headers, bodyPrefix: 'warm' });
    for (const clients of CLIENTS) results.push(runWrk({ url, clients, seconds: MAX_SECONDS, headers, bodyPrefix: `c${clients}` }));
    return results;
  }
  // Warm-up: JIT, pools, prepared plans.
  await runLoad({ url: `${baseUrl}/api/events/message`, clients: 8, total: 2_000, maxSeconds: 5, headers, body: (n) => body(1e9 + n) });
  for (const clients of CLIENTS) {
    results.push(await runLoad({ url: `${baseUrl}/api/events/message`, clients, total: clients === 1 ? Math.min(PER_PHASE, 5_000) : PER_PHASE, maxSeconds: MAX_SECONDS, headers, body: (n) => body(clients * 1e7 + n) }));
  }
  return results;
}

async function main(): Promise<void> {
  const ordinalDb = await createBenchDatabase();
  const baselineDb = await createBenchDatabase();
  try {
    // The baseline writes to the same schema: let Ordinal create it first.
    const schema = await startChild(serverMain, { DATABASE_URL: baselineDb.url, ORDINAL_LOG_FORMAT: 'json' }, 18590, /listening on/);
    await schema.stop();
    const baseline = await startChild(baselineMain, { DATABASE_URL: baselineDb.url }, 18591, /listening/);
    const baselineResults = await phases(baseline.baseUrl);
    await baseline.stop();

    const ordinal = await startChild(serverMain, { DATABASE_URL: ordinalDb.url, ORDINAL_LOG_FORMAT: 'json', ORDINAL_DUPLICATE_WINDOW: '0' }, 18592, /listening on/);
    const ordinalResults = await phases(ordinal.baseUrl);
    await ordinal.stop();

    const at32 = (r: LoadResult[]) => r.find((x) => x.clients === 32)!.msgPerSec;
    console.log(JSON.stringify({
      benchmark: 'ingest',
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version, loadGenerator: hasWrk() ? 'wrk' : 'node http (install wrk for a lighter client)' },
      ordinal: ordinalResults,
      seedBaseline: baselineResults,
      ratioAt32: Number((at32(ordinalResults) / at32(baselineResults)).toFixed(2)),
      goals: { ratioAt32: 8, msgPerSecAt32: 10_000 },
    }, null, 2));
  } finally {
    await ordinalDb.drop();
    await baselineDb.drop();
  }
}

await main();
