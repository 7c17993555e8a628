/**
 * The machine's ceiling for the projections benchmark's shape of work (projections.bench.ts):
 * the CPU-only ceiling (`speedupCeiling`: every core busy at the CPU an event costs) assumes
 * that enough work is in flight to keep both cores busy; nine partitions, each applying its
 * events one after the other with 1 ms of I/O and a database round trip apiece, may not. This
 * runs that shape with no framework at all (support/shape-worker.ts: three processes of three
 * loops, each event a 1 ms timer, a spin of the workers' CPU and one statement burning the
 * database's CPU, in transactions), at the CPU an event cost the projection with three
 * processes, and reports the rate it reaches: what this machine allows for that shape.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createBenchDatabase } from './bench-database.js';
import { backendsOf, cpuMeter, cpuUs } from './proc-cpu.js';
import { costPerEvent } from './projection-bench.js';
import { spin } from './spin.js';

const WORKER = fileURLToPath(new URL('./shape-worker.js', import.meta.url));
const PROCESSES = 3;
const LOOPS = 3;
/** A batch's events, about what each partition's batches held with three processes. */
const BATCH = 150;
/** What a shape worker costs per event besides its spin (timer, pg query), first guess. */
const WORKER_OVERHEAD_US = 110;

/** µs of CPU an event cost, by group, as projections.bench.ts reports them. */
export interface EventCost {
  workers: number;
  postgres: number;
  benchmark: number;
}

interface ShapeRun {
  eventsPerSecond: number;
  cpu: ReturnType<typeof costPerEvent>;
  spinUs: number;
  burnRows: number;
}

/** µs of its backend's CPU one burning statement of `rows` costs: the mean of 3,000 (/proc counts in ticks of 10 ms). */
async function statementCost(client: pg.Client, backend: number, rows: number): Promise<number> {
  const before = cpuUs(backend);
  for (let i = 0; i < 3000; i++)
    await client.query('SELECT count(*) FROM generate_series(1, $1::int)', [rows]);
  return (cpuUs(backend) - before) / 3000;
}

function start(url: string, events: number, spinUs: number, burnRows: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    [WORKER, url, String(LOOPS), String(events), String(BATCH), String(spinUs), String(burnRows)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const seen = (word: string) =>
    new Promise<void>((resolve, reject) => {
      const look = () => output.includes(word) && resolve();
      child.stdout!.on('data', look);
      child.once('exit', (code) => reject(new Error(`shape worker exited with ${code}`)));
      look();
    });
  return { child, ready: seen('ready'), done: seen('done') };
}

async function run(
  url: string,
  admin: pg.Client,
  database: string,
  events: number,
  spinUs: number,
  burnRows: number,
  benchmarkUs: number,
): Promise<ShapeRun> {
  const workers = Array.from({ length: PROCESSES }, () =>
    start(url, Math.ceil(events / PROCESSES / LOOPS), spinUs, burnRows),
  );
  try {
    await Promise.all(workers.map((w) => w.ready));
    const meter = await cpuMeter({
      workers: () => workers.map((w) => w.child.pid!),
      postgres: () => backendsOf(admin, database),
    });
    const started = performance.now();
    for (const w of workers) w.child.stdin!.write('go\n');
    // This process's share (the projection benchmark's writer and polls), front-loaded as the writer's appends are.
    for (let left = benchmarkUs * events; left > 0; left -= 2000) {
      spin(2000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(workers.map((w) => w.done));
    const seconds = (performance.now() - started) / 1000;
    return {
      eventsPerSecond: Math.round(events / seconds),
      cpu: costPerEvent(await meter.stop(), events),
      spinUs,
      burnRows,
    };
  } finally {
    // A worker that is still there closes its connections on this line (one that failed is gone).
    for (const w of workers) if (w.child.exitCode === null) w.child.stdin!.end('end\n');
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) =>
            w.child.exitCode !== null ? resolve() : w.child.once('exit', () => resolve()),
          ),
      ),
    );
  }
}

/**
 * Runs the shape at `target` (µs an event: the projection's three-process cost) over `events`
 * events: once with the cost estimated, then `runs` times with the spin and the burn corrected
 * by what the first run measured. Answers the corrected runs (their cost per event beside the
 * target shows how close the imitation came).
 */
export async function sameShape(target: EventCost, events: number, runs = 2): Promise<ShapeRun[]> {
  const db = await createBenchDatabase();
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const base = await statementCost(admin, rows[0].pid, 1);
    const perRow = Math.max(1e-3, ((await statementCost(admin, rows[0].pid, 2001)) - base) / 2000);
    let spinUs = Math.max(0, target.workers - WORKER_OVERHEAD_US);
    let burnRows = Math.max(1, Math.round((target.postgres - base) / perRow));
    const first = await run(db.url, admin, db.name, events, spinUs, burnRows, target.benchmark);
    spinUs = Math.max(0, spinUs + target.workers - first.cpu.usPerEvent.workers);
    const burnt = Math.max(1, first.cpu.usPerEvent.postgres - base);
    burnRows = Math.max(1, Math.round((burnRows * Math.max(1, target.postgres - base)) / burnt));
    const corrected: ShapeRun[] = [];
    for (let i = 0; i < runs; i++)
      corrected.push(await run(db.url, admin, db.name, events, spinUs, burnRows, target.benchmark));
    return corrected;
  } finally {
    await admin.end();
    await db.drop();
  }
}
