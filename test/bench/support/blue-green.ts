/**
 * The blue/green row of `npm run bench:projections`: over a log of `events` messages (filled
 * straight into the table), a projection v1 (one upsert per event into a tally per customer)
 * is built; then, with a reader loop running (`SELECT … WHERE key = $1`, one at a time):
 * - read latency at rest (v1 serving, nothing replaying);
 * - a deploy of v2 (same handler) starts as a candidate and replays the whole log beside v1
 *   until it is promoted by itself: the time to the promoted v2, and the read latency of the
 *   serving model meanwhile;
 * - an in-place rebuild of the same log (the old way): its time to caught-up.
 * The reader is paced (about 200 reads/s) and runs in every phase, so each rebuild has the
 * same company.
 * Everything runs in this process (two Nest application contexts), so the figures compare the
 * two rebuilds on the same footing rather than give a deployment's absolute numbers.
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import {
  EventHandler,
  OrdinalModule,
  Projection,
  ProjectionsService,
  type ProjectionContext,
} from '@ordinal/nestjs';
import { createBenchDatabase } from './bench-database.js';
import { fillLog } from './fill-log.js';

const TYPES = ['OrderPlaced', 'OrderShipped', 'OrderCancelled'];

@Entity('bench_tally')
class BenchTally {
  @PrimaryColumn('text') key!: string;
  @Column('int') n!: number;
}

async function tally(body: unknown, ctx: ProjectionContext): Promise<void> {
  await ctx.manager.query(
    'INSERT INTO bench_tally (key, n) VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET n = bench_tally.n + 1',
    [ctx.message.userId ?? ''],
  );
}

@Projection('bench-tally', { readModels: [BenchTally], batchSize: 500 })
@Injectable()
class TallyV1 {
  @EventHandler(...TYPES)
  on(body: unknown, ctx: ProjectionContext) {
    return tally(body, ctx);
  }
}

@Projection({ name: 'bench-tally', version: 2, readModels: [BenchTally], batchSize: 500 })
@Injectable()
class TallyV2 {
  @EventHandler(...TYPES)
  on(body: unknown, ctx: ProjectionContext) {
    return tally(body, ctx);
  }
}

async function app(url: string, projection: object): Promise<INestApplicationContext> {
  @Module({
    imports: [
      OrdinalModule.forRoot({
        url,
        entities: [BenchTally],
        typeorm: { extra: { max: 4 } },
        log: { duplicateWindow: 0 },
        subscriptions: { idlePollMs: 50 },
        cqrs: false,
      }),
    ],
    providers: [projection as never],
  })
  class BenchModule {}
  const context = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  await context.init();
  return context;
}

/** Reads one key at a time until stopped; returns each read's milliseconds. */
function readerLoop(client: pg.Client): { stop: () => Promise<number[]> } {
  let running = true;
  const times: number[] = [];
  const done = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      await client.query('SELECT n FROM bench_tally WHERE key = $1', [`customer-${i % 1000}`]);
      times.push(performance.now() - started);
      // Paced (about 200 reads/s): a reader among others, not a load of its own.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return times;
    },
  };
}

function p99(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return (
    Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] * 100) / 100
  );
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The blue/green figures over `events` messages. */
export async function blueGreen(events: number) {
  const db = await createBenchDatabase();
  const client = new pg.Client({ connectionString: db.url });
  let v1: INestApplicationContext | null = null;
  let v2: INestApplicationContext | null = null;
  try {
    // The schema first (a start runs the migrations), then the log, then the v1 table.
    v1 = await app(db.url, TallyV1);
    await client.connect();
    await client.query('CREATE TABLE bench_tally (key text PRIMARY KEY, n int NOT NULL)');
    const head = await fillLog(db.url, events);
    const position = async (group: string) => {
      const { rows } = await client.query<{ p: string | null }>(
        'SELECT min(position)::text AS p FROM checkpoints WHERE name = $1',
        [group],
      );
      return Number(rows[0].p ?? 0);
    };
    await until(async () => (await position('bench-tally')) >= head, 3_600_000, 'v1 built');

    const atRest = readerLoop(client);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const restTimes = await atRest.stop();

    const during = readerLoop(client);
    const deployed = performance.now();
    v2 = await app(db.url, TallyV2);
    await until(
      async () =>
        (
          await client.query<{ state: string }>(
            `SELECT state FROM projection_versions WHERE projection = 'bench-tally' AND version = 2`,
          )
        ).rows[0]?.state === 'serving',
      3_600_000,
      'v2 promoted',
    );
    const promotedSeconds = (performance.now() - deployed) / 1000;
    const duringTimes = await during.stop();

    await v1.close();
    v1 = null;
    // The same reader load during the in-place rebuild (its readers see the model empty, then filling up).
    const inPlace = readerLoop(client);
    const rebuilt = performance.now();
    await v2.get(ProjectionsService).rebuild('bench-tally', { mode: 'in-place' });
    await until(
      async () => (await position('bench-tally@v2')) >= head,
      3_600_000,
      'in-place rebuild',
    );
    const inPlaceSeconds = (performance.now() - rebuilt) / 1000;
    const inPlaceTimes = await inPlace.stop();

    const rest = p99(restTimes);
    const replay = p99(duringTimes);
    return {
      events,
      secondsToPromotedV2: Math.round(promotedSeconds * 100) / 100,
      secondsInPlaceRebuild: Math.round(inPlaceSeconds * 100) / 100,
      readP99Ms: {
        atRest: rest,
        duringCandidateReplay: replay,
        duringInPlaceRebuild: p99(inPlaceTimes),
      },
      readP99Ratio: Math.round((replay / rest) * 100) / 100,
      reads: { atRest: restTimes.length, duringCandidateReplay: duringTimes.length },
      goalMet: replay <= 2 * rest,
    };
  } finally {
    await v2?.close();
    await v1?.close();
    await client.end().catch(() => undefined);
    await db.drop();
  }
}
