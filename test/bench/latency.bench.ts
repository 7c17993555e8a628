/**
 * `npm run bench:latency` (issue 30): Ordinal with its database across a network. Every
 * connection the server (or the aggregate store) opens goes through a delay proxy on
 * loopback (support/delay-proxy.ts, in its own process) that holds each chunk `d` ms each
 * way; d = 0 is the same path through the proxy with no delay, the baseline each delayed
 * figure is set beside, measured in the same round.
 *
 * - ingest: a server per ordering mode in its own process, default settings, driven by wrk
 *   (another process) at 1, 32 and 128 keep-alive clients, single messages
 *   (`PUT /api/events/message`) and batches of 100 (`POST /api/events/messages`);
 * - SSE catch-up: one stream over a log filled beforehand, from index 1 to its head;
 * - aggregates: an append with an expected version and a load with a snapshot, one at a time,
 *   through `StreamStore` / `AggregateRepository` in this process.
 *
 * Each figure gets its round trips: `roundTripsPerOp` = clients / (rate × RTT), as in the issue
 * (how many round trips of the delay one operation waited, the rest being the machine's
 * CPU), and `dbRoundTripsPerOp`, counted by the proxy on every connection (each time a client
 * spoke again after PostgreSQL answered), divided by the operations.
 *
 * BENCH_DELAYS ("0,1,5" ms one way), BENCH_JITTER (0 ms), BENCH_CLIENTS ("1,32,128"),
 * BENCH_SECONDS (3 per phase), BENCH_ROUNDS (1), BENCH_PART ("ingest,sse,aggregates"),
 * BENCH_MODES ("gapless,concurrent,bare"; bare: bench:ingest's bare Fastify route with the gapless
 * writer's group commit and nothing else, single messages only: what the machine allows),
 * BENCH_BATCH ("1,100"), BENCH_KEYED (`1`: every published
 * message with an idempotency key of its own), BENCH_SSE_MESSAGES (20,000),
 * BENCH_SERVER_MAIN (another build's main.js), BENCH_SAME_SHAPE_AFTER (0: the share of the same
 * shape's spin spent after the message is stored, before its answer) shorten or vary a run; BENCH_CPU_PROF=<dir> profiles the
 * ingest servers (node --cpu-prof).
 */
import 'reflect-metadata';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { aggregateRepositoryToken } from '@ordinal/event-sourcing';
import {
  Aggregate,
  AggregateRoot,
  DomainEvent,
  OrdinalModule,
  StreamStore,
  type AggregateRepository,
} from '@ordinal/nestjs';
import { createBenchDatabase, type BenchDatabase } from './support/bench-database.js';
import { forkDelayProxy, type ForkedDelayProxy } from './support/delay-proxy-process.js';
import type { DelayProxyStats } from './support/delay-proxy.js';
import { freePort } from './support/free-port.js';
import { migrateWith, startChild, type ChildServer } from './support/child-server.js';
import { hasWrk, runWrk } from './support/wrk-load.js';
import { fillLog } from './support/fill-log.js';
import { countStream } from './support/sse-count.js';
import { cpuUs } from './support/proc-cpu.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain =
  process.env.BENCH_SERVER_MAIN ??
  join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
/** The machine's own figure for single messages: Ordinal's group commit and nothing else. */
const bareMain = join(here, 'support', 'bare-ingest-server.js');
const list = (name: string, fallback: string) =>
  (process.env[name] ?? fallback).split(',').filter((s) => s.length > 0);
const DELAYS = list('BENCH_DELAYS', '0,1,5').map(Number);
const JITTER = Number(process.env.BENCH_JITTER ?? 0);
const CLIENTS = list('BENCH_CLIENTS', '1,32,128').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));
const PARTS = new Set(list('BENCH_PART', 'ingest,sse,aggregates'));
const KEYED = process.env.BENCH_KEYED === '1';
const MODES = list('BENCH_MODES', 'gapless,concurrent,bare');
/** The bare route takes single messages only. */
const batchesOf = (mode: string) => (mode === 'bare' ? BATCHES.filter((b) => b === 1) : BATCHES);
const BATCHES = list('BENCH_BATCH', '1,100').map(Number);
const SSE_MESSAGES = Number(process.env.BENCH_SSE_MESSAGES ?? 20_000);
/** The share of the same shape's spin spent after the message is stored, before the answer. */
const SAME_SHAPE_AFTER = Math.min(1, Math.max(0, Number(process.env.BENCH_SAME_SHAPE_AFTER ?? 0)));
const AGGREGATE_SECONDS = Number(process.env.BENCH_AGGREGATE_SECONDS ?? 2);
const headers = { authorization: 'Bearer dev-ordinal-token' };
const upstreamUrl = new URL(
  process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
);
const upstream = { host: upstreamUrl.hostname, port: Number(upstreamUrl.port || 5432) };
const round2 = (x: number) => Number(x.toFixed(2));
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** `url` with its host and port replaced by the proxy's. */
function viaProxy(url: string, proxy: ForkedDelayProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}

/** Round trips of the delay one operation waited: `concurrency / (rate × RTT)`; null at 0 ms. */
const roundTripsPerOp = (concurrency: number, perSec: number, delayMs: number) =>
  delayMs > 0 && perSec > 0 ? round2(concurrency / (perSec * ((2 * delayMs) / 1000))) : null;

/** Runs `work` at `delayMs` and returns its figures with the proxy's count of database round trips. */
async function throughProxy<T>(
  proxy: ForkedDelayProxy,
  delayMs: number,
  work: () => Promise<T> | T,
): Promise<{ result: T; proxy: DelayProxyStats }> {
  await proxy.setDelay({ delayMs, jitterMs: delayMs > 0 ? JITTER : 0 });
  await proxy.resetStats();
  const result = await work();
  return { result, proxy: await proxy.stats() };
}

/** A server of `mode` in its own process, every connection of it through a fresh proxy. */
async function startServer(
  mode: string,
  spinUs = 0,
  spinAfterUs = 0,
): Promise<{ mode: string; server: ChildServer; proxy: ForkedDelayProxy; db: BenchDatabase }> {
  const db = await createBenchDatabase();
  const proxy = await forkDelayProxy(upstream);
  if (mode === 'bare') {
    // Ordinal creates the schema the bare route writes to, then the route alone serves.
    await migrateWith(serverMain, db.url);
    const server = await startChild(
      bareMain,
      {
        DATABASE_URL: viaProxy(db.url, proxy),
        SPIN_US: String(spinUs),
        SPIN_AFTER_US: String(spinAfterUs),
      },
      await freePort(),
      /listening/,
    );
    return { mode, server, proxy, db };
  }
  const server = await startChild(
    serverMain,
    {
      DATABASE_URL: viaProxy(db.url, proxy),
      ORDINAL_LOG_FORMAT: 'json',
      ORDINAL_ORDERING: mode,
    },
    await freePort(),
    /listening on/,
    // BENCH_CPU_PROF=<dir>: each ingest server writes its CPU profile there when it stops.
    process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [],
  );
  return { mode, server, proxy, db };
}

interface IngestRow {
  mode: string;
  batch: number;
  clients: number;
  delayMs: number;
  round: number;
  msgPerSec: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  roundTripsPerOp: number | null;
  dbRoundTripsPerOp: number;
  /** µs of the server process's CPU per message over the run. */
  serverCpuUsPerMsg: number;
  overZeroDelay?: number;
}

async function ingest(): Promise<unknown> {
  if (!hasWrk()) throw new Error('bench:latency needs wrk (/usr/bin/wrk)');
  const servers: {
    mode: string;
    server: ChildServer;
    proxy: ForkedDelayProxy;
    db: BenchDatabase;
  }[] = [];
  const rows: IngestRow[] = [];
  let sameShape: Record<string, unknown> | null = null;
  try {
    for (const mode of MODES) servers.push(await startServer(mode));
    let phase = 0;
    const run = (baseUrl: string, clients: number, batch: number, seconds = SECONDS) =>
      runWrk({
        url: `${baseUrl}/api/events/${batch > 1 ? 'messages' : 'message'}`,
        clients,
        seconds,
        headers,
        bodyPrefix: `l${++phase}`,
        batch: batch > 1 ? batch : 0,
        keyed: KEYED,
        // 128 clients × 100 messages is 12,800 in flight: more than 2 s a request on a slow machine.
        timeoutSeconds: 30,
      });
    // Warm-up: JIT, pools, prepared statements on every connection, and past the duplicate
    // window (the first 2,000 messages after a start, during which gapless flushes go one at a time).
    for (const { mode, server } of servers) {
      let warm = 0;
      while (mode !== 'bare' && warm < 2_500) warm += run(server.baseUrl, 8, 100, 1).messages;
      run(server.baseUrl, 32, 1, mode === 'bare' ? 2 : 1);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const batch of BATCHES) {
        for (const clients of CLIENTS) {
          for (const { mode, server, proxy } of round % 2 === 0
            ? servers
            : [...servers].reverse()) {
            if (!batchesOf(mode).includes(batch)) continue;
            for (const delayMs of DELAYS) {
              const pid = server.child.pid!;
              const cpuBefore = cpuUs(pid);
              const { result, proxy: seen } = await throughProxy(proxy, delayMs, () =>
                run(server.baseUrl, clients, batch),
              );
              const serverCpuUsPerMsg = Math.round(
                (cpuUs(pid) - cpuBefore) / Math.max(1, result.messages),
              );
              const requests = result.messages / batch;
              const row: IngestRow = {
                mode,
                batch,
                clients,
                delayMs,
                round,
                msgPerSec: result.msgPerSec,
                requestsPerSec: Math.round(requests / result.seconds),
                p50Ms: result.p50Ms,
                p99Ms: result.p99Ms,
                failures: result.failures,
                roundTripsPerOp: roundTripsPerOp(clients, requests / result.seconds, delayMs),
                dbRoundTripsPerOp: requests > 0 ? round2(seen.roundTrips / requests) : 0,
                serverCpuUsPerMsg,
              };
              rows.push(row);
              process.stderr.write(`ingest ${JSON.stringify(row)}\n`);
            }
          }
        }
      }
    }
    // The 128-client goal's same shape with no framework: the bare route with the CPU per
    // message Ordinal's gapless server spent at 0 ms spun into each request (so it is as
    // CPU-bound as Ordinal when the database is near), at 0 ms and the longest delay. Its
    // 5 ms / 0 ms is what the machine allows a group commit that costs what Ordinal costs.
    const far = Math.max(...DELAYS);
    const cpuAt0 = (mode: string) =>
      median(
        rows
          .filter((r) => r.mode === mode && r.clients === 128 && r.batch === 1 && r.delayMs === 0)
          .map((r) => r.serverCpuUsPerMsg),
      );
    if (
      ['gapless', 'bare'].every((m) => MODES.includes(m)) &&
      CLIENTS.includes(128) &&
      DELAYS.includes(0) &&
      far > 0
    ) {
      const extraUs = Math.max(0, cpuAt0('gapless') - cpuAt0('bare'));
      const spinAfterUs = Math.round(extraUs * SAME_SHAPE_AFTER);
      const spinUs = extraUs - spinAfterUs;
      const shaped = await startServer('bare', spinUs, spinAfterUs);
      servers.push(shaped);
      run(shaped.server.baseUrl, 32, 1, 2);
      const measured: { delayMs: number; msgPerSec: number; serverCpuUsPerMsg: number }[] = [];
      const ratios: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const rate: Record<number, number> = {};
        for (const delayMs of [0, far]) {
          const pid = shaped.server.child.pid!;
          const cpuBefore = cpuUs(pid);
          const { result } = await throughProxy(shaped.proxy, delayMs, () =>
            run(shaped.server.baseUrl, 128, 1),
          );
          rate[delayMs] = result.msgPerSec;
          const row = {
            delayMs,
            msgPerSec: result.msgPerSec,
            serverCpuUsPerMsg: Math.round((cpuUs(pid) - cpuBefore) / Math.max(1, result.messages)),
          };
          measured.push(row);
          process.stderr.write(`ingest sameShape ${JSON.stringify(row)}\n`);
        }
        ratios.push(rate[far] / Math.max(1, rate[0]));
      }
      sameShape = {
        what: "bench:ingest's bare route with the CPU per message of Ordinal's gapless server at 0 ms spun into each request, 128 clients",
        spinUs,
        spinAfterUs,
        cpuUsPerMsgAt0: { gapless: cpuAt0('gapless'), bare: cpuAt0('bare') },
        runs: measured,
        overZeroDelay: round2(median(ratios)),
      };
    }
  } finally {
    for (const { server, proxy, db } of servers) {
      await server.stop();
      await proxy.close();
      await db.drop();
    }
  }
  // The table: per mode, batch, clients and delay, the median over rounds, and its ratio to 0 ms.
  const table: IngestRow[] = [];
  for (const mode of MODES)
    for (const batch of batchesOf(mode))
      for (const clients of CLIENTS)
        for (const delayMs of DELAYS) {
          const mine = rows.filter(
            (r) =>
              r.mode === mode &&
              r.batch === batch &&
              r.clients === clients &&
              r.delayMs === delayMs,
          );
          const mid = median(mine.map((r) => r.msgPerSec));
          const row = { ...mine.find((r) => r.msgPerSec === mid)! };
          const zero = rows.filter(
            (r) => r.mode === mode && r.batch === batch && r.clients === clients && r.delayMs === 0,
          );
          if (zero.length > 0 && delayMs > 0 && zero.every((z) => z.msgPerSec > 0))
            row.overZeroDelay = round2(
              median(
                mine.map(
                  (r) =>
                    r.msgPerSec / Math.max(1, zero.find((z) => z.round === r.round)!.msgPerSec),
                ),
              ),
            );
          table.push(row);
        }
  const at = (mode: string, clients: number, delayMs: number, batch = 1) =>
    table.find(
      (r) => r.mode === mode && r.clients === clients && r.delayMs === delayMs && r.batch === batch,
    );
  const d = Math.max(...DELAYS);
  const goals: Record<string, unknown> = {};
  if (at('concurrent', 32, d) && at('gapless', 32, d)) {
    goals[`roundTripsPerPublishAt32Clients${d}msConcurrent`] = {
      measured: at('concurrent', 32, d)!.roundTripsPerOp,
      goal: '≤ 1.25 at 5 ms',
    };
    goals[`roundTripsPerPublishAt32Clients${d}msGapless`] = {
      measured: at('gapless', 32, d)!.roundTripsPerOp,
      goal: '≤ 1.8 at 5 ms',
      bareGroupCommit: at('bare', 32, d)?.roundTripsPerOp ?? null,
    };
    goals.concurrentOverGaplessAt32 = {
      measured: round2(
        at('concurrent', 32, d)!.msgPerSec / Math.max(1, at('gapless', 32, d)!.msgPerSec),
      ),
      goal: '≥ 1.3 at 5 ms',
    };
  }
  if (at('gapless', 128, d)) {
    // What the machine allows: the bare route, Ordinal's group commit and nothing else, through
    // the same proxy at the same delays (the proxy, wrk and PostgreSQL share the two cores).
    const bare = at('bare', 128, d)?.overZeroDelay ?? null;
    const measured = at('gapless', 128, d)!.overZeroDelay ?? null;
    const shaped = (sameShape?.overZeroDelay as number | undefined) ?? null;
    goals[`gaplessAt128Clients${d}msOverZero`] = {
      measured,
      goal: '≥ 0.8 at 5 ms',
      bareGroupCommit: bare,
      sameShape: shaped,
      ofSameShape: shaped && measured !== null ? round2(measured / shaped) : null,
    };
  }
  return { table, goals, sameShape };
}

async function sse(): Promise<unknown> {
  const db = await createBenchDatabase();
  const proxy = await forkDelayProxy(upstream);
  let server: ChildServer | undefined;
  const agent = new http.Agent({ keepAlive: true });
  try {
    server = await startChild(
      serverMain,
      { DATABASE_URL: viaProxy(db.url, proxy), ORDINAL_LOG_FORMAT: 'json' },
      await freePort(),
      /listening on/,
    );
    const head = await fillLog(db.url, SSE_MESSAGES);
    await countStream(server.baseUrl, headers, 1, head, agent); // warm-up
    const rows: Record<string, unknown>[] = [];
    for (let round = 0; round < ROUNDS; round++)
      for (const delayMs of DELAYS) {
        const { result, proxy: seen } = await throughProxy(proxy, delayMs, () =>
          countStream(server!.baseUrl, headers, 1, head, agent),
        );
        const msgPerSec = Math.round(result.messages / (result.ms / 1000));
        const row = {
          delayMs,
          round,
          messages: result.messages,
          ms: round2(result.ms),
          msgPerSec,
          pages: Math.ceil(head / 1000),
          // Counted by the proxy: reads of 1,000 (two in flight) and the stream's opening reads.
          dbRoundTrips: seen.roundTrips,
          // How many round trips of the delay the whole catch-up took, per page.
          roundTripsPerPage:
            delayMs > 0 ? round2(result.ms / (2 * delayMs) / Math.ceil(head / 1000)) : null,
        };
        rows.push(row);
        process.stderr.write(`sse ${JSON.stringify(row)}\n`);
      }
    return { messages: head, rows };
  } finally {
    agent.destroy();
    await server?.stop();
    await proxy.close();
    await db.drop();
  }
}

@DomainEvent('Added')
class Added {
  constructor(readonly value: number) {}
}

@Aggregate({ events: [Added], snapshotEvery: 50 })
class Counter extends AggregateRoot {
  sum = 0;
  onAdded(event: Added): void {
    this.sum += event.value;
  }
}

async function aggregates(): Promise<unknown> {
  const rows: Record<string, unknown>[] = [];
  for (const mode of MODES) rows.push(...(await aggregatesIn(mode as 'gapless' | 'concurrent')));
  return { rows };
}

async function aggregatesIn(mode: 'gapless' | 'concurrent'): Promise<Record<string, unknown>[]> {
  const db = await createBenchDatabase();
  const proxy = await forkDelayProxy(upstream);
  let app: INestApplicationContext | undefined;
  try {
    @Module({
      imports: [
        OrdinalModule.forRoot({
          url: viaProxy(db.url, proxy),
          log: { duplicateWindow: 0, ordering: mode },
        }),
        OrdinalModule.forFeature([Counter]),
      ],
    })
    class LatencyModule {}
    app = await NestFactory.createApplicationContext(LatencyModule, { logger: false });
    await app.init();
    const store = app.get(StreamStore);
    const repository: AggregateRepository<Counter> = app.get(aggregateRepositoryToken(Counter));
    // A stream with a snapshot (at 100) and a few events after it.
    const loaded = repository.create('latency-snap');
    for (let i = 0; i < 105; i++) loaded.apply(new Added(i));
    await repository.save(loaded);
    let tag = 0;
    const rows: Record<string, unknown>[] = [];
    const timed = async (delayMs: number, kind: string, op: () => Promise<unknown>) => {
      const { result, proxy: seen } = await throughProxy(proxy, delayMs, async () => {
        await op(); // one untimed, so a changed delay is in force on the connection
        const deadline = performance.now() + AGGREGATE_SECONDS * 1000;
        let ops = 0;
        const started = performance.now();
        while (performance.now() < deadline) {
          await op();
          ops += 1;
        }
        return { ops: ops + 1, seconds: (performance.now() - started) / 1000, timedOps: ops };
      });
      const perSec = result.timedOps / result.seconds;
      const row = {
        mode,
        kind,
        delayMs,
        opsPerSec: Math.round(perSec),
        msPerOp: round2(1000 / perSec),
        roundTripsPerOp: roundTripsPerOp(1, perSec, delayMs),
        dbRoundTripsPerOp: round2(seen.roundTrips / result.ops),
      };
      rows.push(row);
      process.stderr.write(`aggregates ${JSON.stringify(row)}\n`);
    };
    for (let round = 0; round < ROUNDS; round++)
      for (const delayMs of DELAYS) {
        const streamId = `latency-${round}-${delayMs}-${tag++}`;
        let version = 0;
        await timed(delayMs, 'append with an expected version', async () => {
          const result = await store.append(streamId, version, [
            { eventType: 'Added', data: { value: version } },
          ]);
          version = result.version;
        });
        await timed(delayMs, 'load with a snapshot', async () => {
          const counter = await repository.load('latency-snap');
          if (counter.sum !== (105 * 104) / 2) throw new Error(`load gave ${counter.sum}`);
        });
      }
    return rows;
  } finally {
    await app?.close();
    await proxy.close();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const report: Record<string, unknown> = {
    benchmark: 'latency',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, loadAverage: loadavg().map(round2) },
    method: {
      delaysMsOneWay: DELAYS,
      jitterMs: JITTER,
      keyedMessages: KEYED,
      secondsPerPhase: SECONDS,
      rounds: ROUNDS,
      roundTripsPerOp: 'concurrency / (rate × RTT), RTT = 2 × delay',
      dbRoundTripsPerOp:
        'counted by the proxy: times a client spoke again after PostgreSQL answered, on all connections, per operation',
    },
  };
  if (PARTS.has('ingest')) report.ingest = await ingest();
  if (PARTS.has('sse')) report.sse = await sse();
  if (PARTS.has('aggregates')) report.aggregates = await aggregates();
  console.log(JSON.stringify(report, null, 2));
}

await main();
