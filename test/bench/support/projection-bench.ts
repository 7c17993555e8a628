/**
 * What the projection benchmarks share (projections.bench.ts, idle.bench.ts, same-shape.ts): a
 * projection worker process (support/projection-worker.ts), a writer application in this
 * process, polling a condition, and what an event cost the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LogWriter, OrdinalModule } from '@ordinal/nestjs';
import type { CpuSpent } from './proc-cpu.js';

const WORKER = fileURLToPath(new URL('./projection-worker.js', import.meta.url));

export interface Worker {
  child: ChildProcess;
  pid: number;
}

/** A projection worker process ('bench', partitioned by userId, 1 ms handler); `env` adds to or overrides its settings. */
export function spawnWorker(
  url: string,
  env: Record<string, string>,
  execArgv: string[] = [],
): Promise<Worker> {
  const child = spawn(process.execPath, [...execArgv, WORKER], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: url,
      PROJECTION: 'bench',
      PARTITION_BY: 'userId',
      HANDLER_DELAY_MS: '1',
      SIDE_EFFECT_ROWS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('worker ready')) resolve({ child, pid: child.pid! });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${output}`)));
  });
}

/** Checks every `everyMs` until `check` answers something other than null; throws after `timeoutMs`. */
export async function poll<T>(
  check: () => Promise<T | null>,
  timeoutMs: number,
  what: string,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** An application context that only writes (no CQRS), with a pool of `poolMax`. */
export async function writerApp(url: string, poolMax: number) {
  @Module({
    imports: [
      OrdinalModule.forRoot({
        url,
        typeorm: { extra: { max: poolMax } },
        log: { duplicateWindow: 0 },
        cqrs: false,
      }),
    ],
  })
  class WriterModule {}
  const app = await NestFactory.createApplicationContext(WriterModule, { logger: ['error'] });
  await app.init();
  return app;
}

/** Appends `count` Tick events in batches of 1,000, the i-th for user `user-<(offset + i) % users>`; returns the last index. */
export async function appendTicks(
  writer: LogWriter,
  count: number,
  offset = 0,
  users = Number.POSITIVE_INFINITY,
): Promise<number> {
  let last = 0;
  for (let done = 0; done < count; done += 1000) {
    const n = Math.min(1000, count - done);
    const result = await writer.append({
      messages: Array.from({ length: n }, (_, i) => ({
        messageType: 'Tick',
        userId: `user-${(offset + done + i) % users}`,
        body: { i },
      })),
    });
    last = (result.entries.at(-1) as { message: { id: number } }).message.id;
  }
  return last;
}

/**
 * What one event cost the machine in a run: µs of CPU of the workers, of the database's
 * PostgreSQL backends and of the benchmark's own process (`self`: the writer appending the events,
 * and the polls),
 * and how busy the machine was. `ceilingEventsPerSecond` is what the machine could do at that
 * cost with every core busy: a speedup the ceiling does not allow is beyond the machine, not
 * the framework.
 */
export function costPerEvent(spent: CpuSpent, events: number) {
  const per = (us: number) => Math.round(us / events);
  const usPerEvent = {
    workers: per(spent.us.workers),
    postgres: per(spent.us.postgres),
    benchmark: per(spent.us.self),
  };
  const total = usPerEvent.workers + usPerEvent.postgres + usPerEvent.benchmark;
  return {
    usPerEvent: { ...usPerEvent, total },
    machineBusy: Math.round(spent.machineBusy * 100) / 100,
    cores: spent.cores,
    ceilingEventsPerSecond: Math.round((spent.cores * 1e6) / total),
  };
}
