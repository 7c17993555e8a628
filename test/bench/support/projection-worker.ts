/**
 * A user's service with one projection, run as its own process by the ownership tests and the
 * projections benchmark (several copies against one database). Environment:
 *
 * - DATABASE_URL; TAKEOVER_MS (consumer ownership bound, default 5000)
 * - PROJECTION (name, default `counter`), PARTITIONS (default 1), PARTITION_BY (`streamId`,
 *   `userId`), BATCH_SIZE (default 50), HANDLER_DELAY_MS (I/O per event, default 0)
 * - DB_POOL (connections of its pool, default 6)
 * - SIDE_EFFECT_ROWS (`0`: the live side effect is the handler's I/O alone, no `side_effects`
 *   row; the benchmark's setting, so that its handler does 1 ms of I/O and one read-model write)
 * - ON_ERROR (`park` or `skip`: one retry, then that), POISON_FILE (while this file exists, an
 *   event with `poison: true` in its body fails)
 * - SUBSCRIPTION (a name: the worker also runs a subscription from code of that name on `Tick`,
 *   which does nothing; the monitoring tests list it beside the projection)
 * - VERSION (a versioned projection, docs/projections.md: `applied` is its read model, an
 *   entity in `readModels`, so a version 2 builds its own; version n ≥ 2 writes the key as
 *   `v<n>:<key>`, a changed handler), PROMOTE_AT_LAG (`false`: promote by hand)
 *
 * The handler writes `applied (index, pid, key)` through the batch's transaction (the read
 * model) and, for live events, `side_effects (index, pid)` on a connection of its own, outside
 * that transaction (a stand-in for mail or HTTP). Both tables are created by the caller.
 * Prints `worker ready <pid>` once started; SIGTERM closes it gracefully.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { Column, Entity, PrimaryColumn, type EntityManager } from 'typeorm';
import {
  EventHandler,
  OrdinalModule,
  Projection,
  SubscriptionsService,
  type ProjectionContext,
  type ProjectionOptions,
} from '@ordinal/nestjs';

const env = process.env;
const url = env.DATABASE_URL!;
const name = env.PROJECTION ?? 'counter';
const partitions = Number(env.PARTITIONS ?? 1);
const delayMs = Number(env.HANDLER_DELAY_MS ?? 0);
const sideEffects = new pg.Pool({
  connectionString: url,
  max: Number(env.DB_POOL ?? 6),
  application_name: 'worker-side-effects',
});

const options: ProjectionOptions = { batchSize: Number(env.BATCH_SIZE ?? 50) };
if (env.ON_ERROR) options.onError = { retries: 1, then: env.ON_ERROR as 'park' | 'skip' };
if (partitions > 1)
  Object.assign(options, {
    partitions,
    partitionBy: (env.PARTITION_BY ?? 'streamId') as 'streamId' | 'userId',
  });

/** The read model of a versioned worker (VERSION set): the caller creates `applied` for its first version. */
@Entity('applied')
class Applied {
  @PrimaryColumn('bigint') index!: string;
  @Column('int') pid!: number;
  @Column('text', { nullable: true }) key!: string | null;
}
const version = env.VERSION ? Number(env.VERSION) : undefined;
if (version !== undefined)
  Object.assign(options, {
    version,
    readModels: [Applied],
    promoteAtLag: env.PROMOTE_AT_LAG === 'false' ? false : Number(env.PROMOTE_AT_LAG ?? 0),
  });
const keyPrefix = version !== undefined && version >= 2 ? `v${version}:` : '';

@Projection(name, options)
@Injectable()
class CounterProjection {
  @EventHandler('Tick')
  async onTick(body: { poison?: boolean }, ctx: ProjectionContext): Promise<void> {
    if (body.poison && env.POISON_FILE && existsSync(env.POISON_FILE))
      throw new Error(`poison at ${ctx.index}`);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    await ctx.manager.query('INSERT INTO applied (index, pid, key) VALUES ($1, $2, $3)', [
      ctx.index,
      process.pid,
      version === undefined
        ? (ctx.message.streamId ?? ctx.message.userId)
        : keyPrefix + (ctx.message.streamId ?? ctx.message.userId ?? ''),
    ]);
    if (!ctx.isReplay && env.SIDE_EFFECT_ROWS !== '0')
      await sideEffects.query('INSERT INTO side_effects (index, pid) VALUES ($1, $2)', [
        ctx.index,
        process.pid,
      ]);
  }

  /** A rebuild empties the read model (in the rebuild's transaction). */
  async reset(manager: EntityManager): Promise<void> {
    await manager.query('DELETE FROM applied');
  }
}

@Module({
  imports: [
    OrdinalModule.forRoot({
      url,
      entities: version === undefined ? [] : [Applied],
      typeorm: {
        extra: { max: Number(env.DB_POOL ?? 6), application_name: `worker-${process.pid}` },
      },
      log: { duplicateWindow: 0, takeoverMs: Number(env.TAKEOVER_MS ?? 5000) },
      subscriptions: { retryInitialMs: 50, retryMaxMs: 500, idlePollMs: 50 },
      cqrs: false,
    }),
  ],
  providers: [CounterProjection],
})
class WorkerModule {}

const app = await NestFactory.createApplicationContext(WorkerModule, {
  logger: ['log', 'warn', 'error'],
});
if (env.SUBSCRIPTION)
  app.get(SubscriptionsService).subscribe({
    name: env.SUBSCRIPTION,
    stream: { types: ['Tick'] },
    handle: () => undefined,
  });
await app.init();
// SIGTERM: a graceful stop, then a normal exit (so `node --cpu-prof` writes its profile).
process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => sideEffects.end())
    .finally(() => process.exit(0));
});
console.log(`worker ready ${process.pid}`);
