/**
 * B4: `$all` delivery latency behind rolled-back holes, and projection throughput. Prints JSON.
 *
 * Latency: concurrent mode; 8 closed-loop writers, one per category, append one message per
 * call through the LogWriter (per-category locks, several flushes in flight); beside them,
 * 1% of appends are rolled back (a raw transaction draws a position from the sequence and rolls
 * back, leaving a hole). A `$all` subscription records, per message, the time from its commit
 * (the writer's commit listener) to its handler. The same run with exact release off shows the
 * cost of waiting for the gap timeout alone; it may not drain at all (every hole costs the
 * timeout), so the drain stops after BENCH_DRAIN_CAP_MS and undelivered messages count with
 * their latency so far (a lower bound).
 *
 * Throughput: a projection catching up on pre-written events into a same-database read model
 * (one INSERT per event in the batch's transaction, checkpoint once per batch).
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplicationContext, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { LogWatermark } from '@ordinal/log';
import {
  EventHandler,
  LogWriter,
  OrdinalModule,
  Projection,
  ProjectionsService,
  SubscriptionsService,
  type OrdinalModuleOptions,
  type ProjectionContext,
} from '@ordinal/nestjs';
import { createBenchDatabase } from './support/bench-database.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CATEGORIES = 8;
const ROLLBACK_RATE = 0.01;
const DRAIN_CAP_MS = Number(process.env.BENCH_DRAIN_CAP_MS ?? 20_000);
const PROJECTION_EVENTS = Number(process.env.BENCH_PROJECTION_EVENTS ?? 20_000);

async function startApp(
  url: string,
  log: OrdinalModuleOptions['log'],
  providers: Type[] = [],
): Promise<INestApplicationContext> {
  @Module({
    imports: [
      OrdinalModule.forRoot({
        url,
        typeorm: { extra: { max: 16 } },
        log: { duplicateWindow: 0, ...log },
        cqrs: false,
      }),
    ],
    providers: providers as never[],
  })
  class BenchModule {}
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  await app.init();
  return app;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? null
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (n: number | null) => (n === null ? null : Math.round(n * 100) / 100);

async function latencyRun(exactRelease: boolean) {
  const db = await createBenchDatabase();
  const app = await startApp(db.url, { ordering: 'concurrent', exactRelease, gapTimeoutMs: 5000 });
  const rollbackClients = await Promise.all(
    Array.from({ length: CATEGORIES }, async () => {
      const c = new pg.Client({ connectionString: db.url, application_name: 'bench-rollback' });
      await c.connect();
      return c;
    }),
  );
  try {
    const writer = app.get(LogWriter);
    const committedAt = new Map<number, number>();
    writer.onCommit((batch) => {
      const now = performance.now();
      for (const m of batch) committedAt.set(m.id, now);
    });
    const latencies: number[] = [];
    const deliveredIndexes: number[] = [];
    app.get(SubscriptionsService).subscribe({
      name: 'bench-all',
      stream: '$all',
      handle: (m) => {
        const at = committedAt.get(m.id);
        if (at === undefined) return;
        latencies.push(Math.max(0, performance.now() - at));
        deliveredIndexes.push(m.id);
      },
    });
    let appended = 0;
    let rolledBack = 0;
    let last = 0;
    const deadline = performance.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CATEGORIES }, async (_, c) => {
        while (performance.now() < deadline) {
          if (Math.random() < ROLLBACK_RATE) {
            const client = rollbackClients[c];
            await client.query('BEGIN');
            await client.query(
              `INSERT INTO messages (index, message_type, category, body, content_hash) VALUES (nextval('messages_index_seq'), 'Bench', $1, '{}', 'h')`,
              [`cat${c}`],
            );
            await client.query('ROLLBACK');
            rolledBack += 1;
            continue;
          }
          const result = await writer.append({
            messages: [{ messageType: 'Bench', body: { c } }],
            stream: { streamId: `cat${c}-1`, expectedVersion: 'any' },
          });
          const entry = result.entries[0];
          if (entry.status === 'created') last = Math.max(last, entry.message.id);
          appended += 1;
        }
      }),
    );
    // The timeout-only run may never drain (each hole costs the timeout): stop at a cap and count
    // what is still undelivered with its latency so far (a lower bound).
    const drained = await app
      .get(SubscriptionsService)
      .waitFor('bench-all', last, DRAIN_CAP_MS)
      .then(
        () => true,
        () => false,
      );
    const delivered = latencies.length;
    const now = performance.now();
    const deliveredIds = new Set(deliveredIndexes);
    for (const [id, at] of committedAt) if (!deliveredIds.has(id)) latencies.push(now - at);
    const sorted = [...latencies].sort((a, b) => a - b);
    const counters = { ...app.get(LogWatermark).counters };
    return {
      exactRelease,
      gapTimeoutMs: 5000,
      seconds: SECONDS,
      categories: CATEGORIES,
      appended,
      rolledBack,
      appendsPerSecond: Math.round(appended / SECONDS),
      delivered,
      undelivered: latencies.length - delivered,
      drained,
      latencyMs: {
        p50: round(percentile(sorted, 50)),
        p90: round(percentile(sorted, 90)),
        p99: round(percentile(sorted, 99)),
        max: round(sorted.at(-1) ?? null),
      },
      watermark: counters,
    };
  } finally {
    await Promise.all(rollbackClients.map((c) => c.end()));
    await app.close();
    await db.drop();
  }
}

@Projection('bench-read-model')
@Injectable()
class BenchProjection {
  @EventHandler('BenchEvent')
  async on(body: { n: number; amount: number }, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.query('INSERT INTO bench_read_model (index, n, amount) VALUES ($1, $2, $3)', [
      ctx.index,
      body.n,
      body.amount,
    ]);
  }
}

async function projectionRun() {
  const db = await createBenchDatabase();
  const url = db.url;
  const fill = await startApp(url, {});
  try {
    const writer = fill.get(LogWriter);
    for (let i = 0; i < PROJECTION_EVENTS; i += 1000) {
      await writer.append({
        messages: Array.from({ length: 1000 }, (_, k) => ({
          messageType: 'BenchEvent',
          body: { n: i + k, amount: k },
        })),
        skipDuplicateWindow: true,
      });
    }
  } finally {
    await fill.close();
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    'CREATE TABLE bench_read_model (index bigint PRIMARY KEY, n int NOT NULL, amount int NOT NULL)',
  );
  await client.end();
  const started = performance.now();
  const app = await startApp(url, {}, [BenchProjection]);
  try {
    await app.get(ProjectionsService).waitFor(BenchProjection, PROJECTION_EVENTS, 300_000);
    const seconds = (performance.now() - started) / 1000;
    return {
      events: PROJECTION_EVENTS,
      batchSize: 500,
      seconds: round(seconds),
      eventsPerSecond: Math.round(PROJECTION_EVENTS / seconds),
    };
  } finally {
    await app.close();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const withExactRelease = await latencyRun(true);
  const timeoutOnly = await latencyRun(false);
  const projection = await projectionRun();
  const result = {
    benchmark: 'subscriptions',
    goal: 'B4: $all p99 < 100 ms behind rolled-back holes with exact release',
    allDelivery: { withExactRelease, timeoutOnly },
    b4Met: withExactRelease.latencyMs.p99 !== null && withExactRelease.latencyMs.p99 < 100,
    projection,
  };
  console.log(JSON.stringify(result, null, 2));
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
