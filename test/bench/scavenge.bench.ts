/**
 * `npm run bench:scavenge` (docs/lifecycle.md): a scavenge through the server erasing
 * BENCH_ROWS hidden rows (default 1,000,000; every one in streams of a category whose rule
 * hides them), beside a bare `UPDATE messages SET body = 'null', metadata = NULL` over as many
 * rows in batches of the same size, in the same run (the baseline), the scavenge at full speed
 * (`throttlePercent=100`); then publish throughput at 32 clients while a scavenge runs with the
 * server's defaults (its throttle, 25%), beside without one (goal ≥ 0.8×), and while one runs
 * at full speed. The server runs in its own process (apps/eventstore/dist/main.js), with its
 * defaults. Prints one JSON object.
 */
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild } from './support/child-server.js';
import { fillLog } from './support/fill-log.js';
import { runLoad } from './support/http-load.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const CLIENTS = 32;
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const AUTH = { authorization: 'Bearer dev-ordinal-token' };

async function post(baseUrl: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(baseUrl + path, { method: 'POST', headers: AUTH });
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The rows of `[from, to]` erased by bare UPDATEs of `BATCH` indices each, one statement per batch. */
async function bareUpdate(client: pg.Client, from: number, to: number): Promise<number> {
  const started = performance.now();
  for (let at = from; at <= to; at += BATCH)
    await client.query(
      `UPDATE messages SET body = 'null', metadata = NULL WHERE index >= $1 AND index < $2`,
      [at, Math.min(at + BATCH, to + 1)],
    );
  return performance.now() - started;
}

async function publishLoad(baseUrl: string) {
  return runLoad({
    url: `${baseUrl}/api/events/message`,
    clients: CLIENTS,
    total: Number.MAX_SAFE_INTEGER,
    maxSeconds: LOAD_SECONDS,
    headers: AUTH,
    body: (n) => JSON.stringify({ messageType: 'Bench', content: { n, at: Date.now() } }),
  });
}

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  const server = await startChild(
    serverMain,
    {
      ORDINAL_ENV: 'development',
      DATABASE_URL: db.url,
      ORDINAL_LOG_FORMAT: 'json',
      ORDINAL_DUPLICATE_WINDOW: '0',
      AMQP_URL: '',
    },
    18900 + Math.floor(Math.random() * 300),
    /listening on/,
  );
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    // Given ROWS stream rows, all hidden by their category's rule
    const hiddenHead = await fillLog(db.url, ROWS, { streamEvery: 1, streams: 1000 });
    await client.query(
      `INSERT INTO category_rules (category, truncate_before, metadata_version) VALUES ('bench', 9007199254740991, 1)`,
    );
    await client.query('VACUUM ANALYZE messages');
    // When the server scavenges them
    const started = performance.now();
    const run = await post(
      server.baseUrl,
      `/api/admin/scavenge?wait=true&batchSize=${BATCH}&throttlePercent=100`,
    );
    const scavengeMs = performance.now() - started;
    // Beside a bare UPDATE of as many rows (not hidden, so the scavenge above never saw them)
    const bareFrom = hiddenHead + 1;
    const bareTo = await fillLog(db.url, ROWS);
    await client.query('VACUUM ANALYZE messages');
    const bareMs = await bareUpdate(client, bareFrom, bareTo);
    // Then publish throughput without and with a scavenge running
    const without = await publishLoad(server.baseUrl);
    // (the hidden rows get bodies back, unerased, for another scavenge to erase)
    const unerase = async () => {
      await client.query(
        `UPDATE messages SET body = jsonb_build_object('orderId', index), metadata = '{}', erased = NULL WHERE category = 'bench'`,
      );
      await client.query('VACUUM ANALYZE messages');
    };
    const scavengeStatus = async () =>
      (await (
        await fetch(`${server.baseUrl}/api/admin/scavenge?limit=1`, { headers: AUTH })
      ).json()) as { running: { position: number; through: number } | null };
    await unerase();
    await post(server.baseUrl, `/api/admin/scavenge?batchSize=${BATCH}`);
    const during = await publishLoad(server.baseUrl);
    const status = await scavengeStatus();
    // And while one runs at full speed (once the throttled run has finished)
    while ((await scavengeStatus()).running !== null)
      await new Promise((resolve) => setTimeout(resolve, 500));
    await unerase();
    await post(server.baseUrl, `/api/admin/scavenge?batchSize=${BATCH}&throttlePercent=100`);
    const duringFullSpeed = await publishLoad(server.baseUrl);
    const fullSpeedStatus = await scavengeStatus();
    console.log(
      JSON.stringify(
        {
          benchmark: 'scavenge',
          date: new Date().toISOString(),
          machine: { cpus: cpus().length, node: process.version, loadAverage1m: loadavg()[0] },
          rows: ROWS,
          batch: BATCH,
          scavenge: {
            ms: Math.round(scavengeMs),
            rowsPerSec: Math.round(ROWS / (scavengeMs / 1000)),
            rowsErased: run.rowsErased,
            bytesFreed: run.bytesFreed,
            tableBytesBefore: run.tableBytesBefore,
            tableBytesAfter: run.tableBytesAfter,
          },
          baseline: {
            what: "bare UPDATE messages SET body = 'null', metadata = NULL, same batch size",
            ms: Math.round(bareMs),
            rowsPerSec: Math.round(ROWS / (bareMs / 1000)),
          },
          ratioScavengeToBaseline: Number((bareMs / scavengeMs).toFixed(2)),
          publish: {
            clients: CLIENTS,
            withoutScavenge: without,
            duringScavenge: during,
            scavengeStillRunningAtEnd: status.running !== null,
            ratio: Number((during.msgPerSec / without.msgPerSec).toFixed(2)),
            goal: 0.8,
            throttlePercent: "the server's default (ORDINAL_SCAVENGE_THROTTLE_PERCENT, 25)",
            duringFullSpeedScavenge: duringFullSpeed,
            fullSpeedStillRunningAtEnd: fullSpeedStatus.running !== null,
            ratioFullSpeed: Number((duringFullSpeed.msgPerSec / without.msgPerSec).toFixed(2)),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await client.end();
    await server.stop();
    await db.drop();
  }
}

await main();
