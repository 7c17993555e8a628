/**
 * B3: aggregate appends and loads, Ordinal against Emmett (`@event-driven-io/emmett-postgresql`)
 * on the same database in the same run. Prints JSON.
 *
 * Appends: `writers` closed-loop writers for a fixed time, each appending one event per call
 * with an expected version, either each to its own stream ("distinct") or all to one stream
 * ("hot"). Ordinal appends through `StreamStore.append` (the path `AggregateRepository.save`
 * takes), Emmett through `appendToStream`. On a conflict a writer learns the current version and
 * tries again: Ordinal's VersionConflictError carries `current`; Emmett's carries -1, so its
 * writer reads the stream's tail (`readStream({ from })`), the cheapest way its API offers.
 *
 * Loads: one stream of 1,000 events per system; Ordinal's `repository.load` (with and without a
 * snapshot) against Emmett's `aggregateStream` (Emmett has no snapshots).
 */
import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import {
  getPostgreSQLEventStore,
  type PostgresEventStore,
} from '@event-driven-io/emmett-postgresql';
import { aggregateRepositoryToken } from '@ordinal/event-sourcing';
import {
  Aggregate,
  AggregateRoot,
  DomainEvent,
  OrdinalModule,
  StreamStore,
  VersionConflictError,
  type AggregateRepository,
} from '@ordinal/nestjs';
import { createBenchDatabase } from './support/bench-database.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const WRITERS = [1, 8, 32];
const LOAD_EVENTS = 1000;
const LOAD_RUNS = 40;

@DomainEvent('Added')
class Added {
  constructor(readonly value: number) {}
}

@Aggregate({ events: [Added] })
class Counter extends AggregateRoot {
  sum = 0;
  count = 0;
  onAdded(event: Added): void {
    this.sum += event.value;
    this.count += 1;
  }
}

@Aggregate({ events: [Added], snapshotEvery: 500 })
class SnapshotCounter extends Counter {}

type Mode = 'distinct' | 'hot';

/** Appends one event to `streamId` expecting `expected`; returns the new version or the current one after a conflict. */
interface Appender {
  name: string;
  append(
    streamId: string,
    expected: number,
    value: number,
  ): Promise<{ ok: boolean; version: number }>;
}

async function runAppends(
  appender: Appender,
  mode: Mode,
  writers: number,
  tag: string,
  seconds: number,
) {
  const deadline = performance.now() + seconds * 1000;
  let appended = 0;
  let conflicts = 0;
  const started = performance.now();
  const hot = `bench${tag}-hot`;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const streamId = mode === 'hot' ? hot : `bench${tag}-w${w}`;
      let version = 0;
      while (performance.now() < deadline) {
        const result = await appender.append(streamId, version, w);
        version = result.version;
        if (result.ok) appended += 1;
        else conflicts += 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    system: appender.name,
    mode,
    writers,
    appended,
    conflicts,
    seconds: round(elapsed),
    appendsPerSec: Math.round(appended / elapsed),
  };
}

function ordinalAppender(store: StreamStore): Appender {
  return {
    name: 'ordinal',
    async append(streamId, expected, value) {
      try {
        const result = await store.append(streamId, expected, [
          { eventType: 'Added', data: { value } },
        ]);
        return { ok: true, version: result.version };
      } catch (error) {
        if (error instanceof VersionConflictError) return { ok: false, version: error.current };
        throw error;
      }
    },
  };
}

function emmettAppender(store: PostgresEventStore): Appender {
  return {
    name: 'emmett',
    async append(streamId, expected, value) {
      try {
        const result = await store.appendToStream(streamId, [{ type: 'Added', data: { value } }], {
          expectedStreamVersion: BigInt(expected),
        });
        return { ok: true, version: Number(result.nextExpectedStreamVersion) };
      } catch (error) {
        if (
          (error as { name?: string }).name !== 'ExpectedVersionConflictError' &&
          (error as { errorCode?: number }).errorCode !== 412
        )
          throw error;
        const tail = await store.readStream(streamId, { from: BigInt(expected + 1) });
        return {
          ok: false,
          version: tail.events.length > 0 ? Number(tail.currentStreamVersion) : expected,
        };
      }
    },
  };
}

async function timeLoads(load: () => Promise<unknown>) {
  for (let i = 0; i < 5; i++) await load();
  const times: number[] = [];
  for (let i = 0; i < LOAD_RUNS; i++) {
    const started = performance.now();
    await load();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    runs: LOAD_RUNS,
    medianMs: round(times[Math.floor(times.length / 2)]),
    p95Ms: round(times[Math.floor(times.length * 0.95)]),
    meanMs: round(times.reduce((s, t) => s + t, 0) / times.length),
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  let ordinal: INestApplicationContext | undefined;
  let emmettPool: pg.Pool | undefined;
  let emmett: PostgresEventStore | undefined;
  try {
    @Module({
      imports: [
        OrdinalModule.forRoot({
          url: db.url,
          typeorm: { extra: { max: 32 } },
          log: { duplicateWindow: 0 },
        }),
        OrdinalModule.forFeature([Counter, SnapshotCounter]),
      ],
    })
    class BenchModule {}
    ordinal = await NestFactory.createApplicationContext(BenchModule, { logger: false });
    await ordinal.init();
    emmettPool = new pg.Pool({
      connectionString: db.url,
      max: Number(process.env.EMMETT_POOL ?? 32),
    });
    emmett = getPostgreSQLEventStore(db.url, { connectionOptions: { pool: emmettPool } });
    await emmett.schema.migrate();

    const appenders = [ordinalAppender(ordinal.get(StreamStore)), emmettAppender(emmett)];
    const appends: Awaited<ReturnType<typeof runAppends>>[] = [];
    let tag = 0;
    for (const appender of appenders)
      await runAppends(appender, 'distinct', 8, `warm${tag++}`, 0.5);
    for (const mode of ['distinct', 'hot'] as Mode[]) {
      for (const writers of WRITERS) {
        for (const appender of appenders) {
          const result = await runAppends(appender, mode, writers, String(tag++), SECONDS);
          process.stderr.write(
            `${result.system} ${mode} x${writers}: ${result.appendsPerSec}/s (${result.conflicts} conflicts)\n`,
          );
          appends.push(result);
        }
      }
    }

    // Loads of 1,000 events
    const counters: AggregateRepository<Counter> = ordinal.get(aggregateRepositoryToken(Counter));
    const snapshotted: AggregateRepository<SnapshotCounter> = ordinal.get(
      aggregateRepositoryToken(SnapshotCounter),
    );
    const plain = counters.create('load-plain');
    const withSnapshot = snapshotted.create('load-snap');
    const events = Array.from({ length: LOAD_EVENTS }, (_, i) => new Added(i));
    for (const e of events) {
      plain.apply(e);
      withSnapshot.apply(e);
    }
    await counters.save(plain);
    await snapshotted.save(withSnapshot); // crosses 500 and 1000: the policy snapshots at 1000
    await emmett.appendToStream(
      'load-emmett',
      events.map((e) => ({ type: 'Added', data: { value: e.value } })),
    );
    const expected = (LOAD_EVENTS * (LOAD_EVENTS - 1)) / 2;
    const check = (sum: number) => {
      if (sum !== expected) throw new Error(`load produced sum ${sum}, expected ${expected}`);
    };
    const loads = {
      events: LOAD_EVENTS,
      ordinal: await timeLoads(async () => check((await counters.load('load-plain')).sum)),
      ordinalWithSnapshot: await timeLoads(async () =>
        check((await snapshotted.load('load-snap')).sum),
      ),
      emmett: await timeLoads(async () =>
        check(
          (
            await emmett!.aggregateStream('load-emmett', {
              initialState: () => ({ sum: 0, count: 0 }),
              evolve: (
                s: { sum: number; count: number },
                e: { data: Record<string, unknown> },
              ) => ({ sum: s.sum + (e.data.value as number), count: s.count + 1 }),
            })
          ).state.sum,
        ),
      ),
    };

    const rate = (system: string, mode: Mode, writers: number) =>
      appends.find((a) => a.system === system && a.mode === mode && a.writers === writers)!
        .appendsPerSec;
    const ratio = (mode: Mode, writers: number) =>
      round(rate('ordinal', mode, writers) / Math.max(1, rate('emmett', mode, writers)));
    const report = {
      benchmark: 'aggregates',
      date: new Date().toISOString(),
      secondsPerRun: SECONDS,
      postgres: (await emmettPool.query<{ server_version: string }>('SHOW server_version')).rows[0]
        .server_version,
      appends,
      loads,
      goals: {
        appends32DistinctRatio: ratio('distinct', 32),
        appends32HotRatio: ratio('hot', 32),
        appends32AtLeast2x: ratio('distinct', 32) >= 2 && ratio('hot', 32) >= 2,
        loadNoSlower: loads.ordinal.medianMs <= loads.emmett.medianMs,
        loadWithSnapshotNoSlower: loads.ordinalWithSnapshot.medianMs <= loads.emmett.medianMs,
      },
    };
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  } finally {
    await ordinal?.close();
    await emmett?.close().catch(() => undefined);
    await emmettPool?.end().catch(() => undefined);
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
