/**
 * `npm run bench:groups`: events through a consumer group of 1 and of 4 member processes
 * (test/bench/support/group-member.ts, each acknowledging every fetched batch in one request)
 * beside the plain SSE catch-up of the same events in the same run (the baseline, `plainSse`:
 * a byte counter in this process that parses nothing and whose CPU is not counted, so it
 * measures the server), then the ack latency at rest (one event fetched, its ack timed). Goal
 * (issue 27): 4 members >= 0.5x the plain SSE throughput (`ratio4ToSse`); ack p99 < 20 ms at
 * rest. Beside it, `plainSseClient`, a consumer like the members: one process of its own
 * (support/sse-consumer.ts, `@ordinal/client`'s pull consumer over SSE) parsing every event and
 * calling a handler per event, timed from its start to its last event and metered as a group
 * run is (the process counted as `members`); `ratio4ToSseClient` and `ratio1ToSseClient` set
 * the groups of 4 and of 1 against it. The server runs in its own process with
 * default settings. `BENCH_EVENTS` (default 100000), `BENCH_BATCH` (events per fetch, default
 * 500), `BENCH_ACKS` (latency samples, default 200). Each run also reports the CPU it cost
 * per event (µs, from /proc: the server process, the member processes, the database's
 * PostgreSQL backends), which other work on a shared machine disturbs far less than throughput.
 * Last, `floor`: PostgreSQL's CPU per event for the least a group does per event (a row added
 * held, rendered, deleted; batches of `BENCH_BATCH`), on the same database
 * (support/group-floor.ts). `BENCH_CPU_PROF=<dir>` writes the server's CPU profile there (node
 * --cpu-prof). Prints one JSON object.
 */
import http from 'node:http';
import pg from 'pg';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild } from './support/child-server.js';
import { countStream } from './support/sse-count.js';
import { fillLog } from './support/fill-log.js';
import { backendsOf, cpuMeter, type CpuSpent } from './support/proc-cpu.js';
import { groupFloor } from './support/group-floor.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const memberMain = join(here, 'support', 'group-member.js');
const consumerMain = join(here, 'support', 'sse-consumer.js');
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const ACKS = Number(process.env.BENCH_ACKS ?? 200);
const AUTH = { authorization: 'Bearer dev-ordinal-token' };
const TYPES = ['OrderPlaced', 'OrderShipped', 'OrderCancelled'];

async function api(baseUrl: string, method: string, path: string, body?: unknown) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: body === undefined ? AUTH : { ...AUTH, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => undefined)) as Record<string, unknown>;
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** What a meter's processes cost per event (µs of CPU), and how busy the machine was. */
function cpuPerEvent(spent: CpuSpent, events: number) {
  const perEvent = Object.fromEntries(
    Object.entries(spent.us)
      .filter(([name]) => name !== 'self')
      .map(([name, us]) => [name, Number((us / events).toFixed(1))]),
  );
  return { cpuUsPerEvent: perEvent, machineBusy: Number(spent.machineBusy.toFixed(2)) };
}

/** The processes whose CPU a run counts: the server, and the database's PostgreSQL backends. */
interface Processes {
  server: number;
  backends: () => Promise<number[]>;
}

/** Runs `members` member processes on a new group over the whole filled log; events/s from the first fetch to the checkpoint at the head. */
async function groupRun(
  baseUrl: string,
  group: string,
  members: number,
  head: number,
  processes: Processes,
) {
  await api(baseUrl, 'PUT', `/api/consumer-groups/${group}`, {
    source: { types: TYPES },
    maxInFlight: BATCH * 2,
    ackTimeoutMs: 60_000,
  });
  const spawned = performance.now();
  const children = Array.from({ length: members }, (_, i) =>
    spawn(process.execPath, [memberMain], {
      env: {
        ...process.env,
        BASE_URL: baseUrl,
        GROUP: group,
        MEMBER_ID: `m${i}`,
        MAX: String(BATCH),
        WAIT_MS: '1000',
        QUIET: '1',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  // Each member prints the events acknowledged so far after every ack (the server counted
  // them, each once): all of them acknowledged is the checkpoint at the head, which one status
  // read then confirms. Polling the status meanwhile cost the server and PostgreSQL 3-5 ms of
  // CPU a read, about 12 µs an event at one read every 20 ms: the run's own measuring, not the
  // group's work.
  const acked = children.map(() => 0);
  let allAcked: () => void = () => undefined;
  const acknowledgedAll = new Promise<void>((resolve) => (allAcked = resolve));
  await Promise.all(
    children.map(
      (child, i) =>
        new Promise<void>((resolve) => {
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => {
            out += chunk.toString();
            if (out.includes('member ready')) resolve();
            const lines = out.split('\n');
            out = lines.pop()!;
            for (const line of lines)
              if (line.startsWith('acked-total ')) acked[i] = Number(line.slice(12));
            if (acked.reduce((a, b) => a + b, 0) >= EVENTS) allAcked();
          });
        }),
    ),
  );
  const meter = await cpuMeter({
    server: () => [processes.server],
    members: () => children.map((child) => child.pid!),
    postgres: processes.backends,
  });
  const ready = performance.now();
  await acknowledgedAll;
  for (;;) {
    const status = await api(baseUrl, 'GET', `/api/consumer-groups/${group}`);
    if ((status.checkpoint as number) >= head) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const done = performance.now();
  const spent = await meter.stop();
  await Promise.all(
    children.map((child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    }),
  );
  return {
    members,
    events: EVENTS,
    msFromReady: Math.round(done - ready),
    eventsPerSecond: Math.round(EVENTS / ((done - ready) / 1000)),
    memberStartMs: Math.round(ready - spawned),
    ...cpuPerEvent(spent, EVENTS),
  };
}

/** Resolves with the first match of `pattern` in what `child` has written to stdout so far or writes later; rejects if it exits first. */
function output(child: ChildProcessByStdio<Writable, Readable, null>) {
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = out.match(pattern);
        if (!match) return;
        child.stdout.off('data', check);
        child.off('exit', exited);
        resolve(match);
      };
      const exited = (code: number | null) =>
        reject(new Error(`${pattern} not seen; the process exited (${code}): ${out.slice(-500)}`));
      child.stdout.on('data', check);
      child.once('exit', exited);
      check();
    });
}

/**
 * The same events read by one consumer process (support/sse-consumer.ts: `@ordinal/client`'s
 * pull consumer over SSE, parsing every event and calling a handler per event, as the members
 * do); events/s from the moment it is ready (it starts on its parent's word) to its last event.
 */
async function sseClientRun(baseUrl: string, head: number, processes: Processes) {
  const spawned = performance.now();
  const child = spawn(process.execPath, [consumerMain], {
    env: {
      ...process.env,
      BASE_URL: baseUrl,
      START_INDEX: String(head - EVENTS + 1),
      END_INDEX: String(head),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const until = output(child);
  await until(/consumer ready/);
  const meter = await cpuMeter({
    server: () => [processes.server],
    members: () => [child.pid!],
    postgres: processes.backends,
  });
  const ready = performance.now();
  child.stdin.write('go\n');
  const [, handled, reconnections] = await until(/consumer done (\d+) (\d+)/);
  const done = performance.now();
  const spent = await meter.stop();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  if (Number(handled) !== EVENTS)
    throw new Error(`The SSE consumer handled ${handled} events, not ${EVENTS}`);
  return {
    events: EVENTS,
    msFromReady: Math.round(done - ready),
    eventsPerSecond: Math.round(EVENTS / ((done - ready) / 1000)),
    consumerStartMs: Math.round(ready - spawned),
    reconnections: Number(reconnections),
    ...cpuPerEvent(spent, EVENTS),
  };
}

/** Ack latency at rest: one event published, fetched, and its ack timed. */
async function ackLatency(baseUrl: string) {
  await api(baseUrl, 'PUT', '/api/consumer-groups/latency', {
    source: { types: ['Ping'] },
    from: 'end',
  });
  const samples: number[] = [];
  for (let i = 0; i < ACKS; i++) {
    await api(baseUrl, 'PUT', '/api/events/message', { messageType: 'Ping', content: { i } });
    const got = await api(baseUrl, 'POST', '/api/consumer-groups/latency/fetch', {
      memberId: 'lat',
      waitMs: 2000,
    });
    const indices = (got.events as Array<{ index: number }>).map((e) => e.index);
    const started = performance.now();
    await api(baseUrl, 'POST', '/api/consumer-groups/latency/ack', {
      memberId: 'lat',
      epoch: got.epoch,
      indices,
    });
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) =>
    Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2));
  return { samples: samples.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) };
}

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  const profile = process.env.BENCH_CPU_PROF;
  const server = await startChild(
    serverMain,
    { ORDINAL_ENV: 'development', DATABASE_URL: db.url, ORDINAL_LOG_FORMAT: 'json', AMQP_URL: '' },
    18900 + Math.floor(Math.random() * 90),
    /listening on/,
    profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [],
  );
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const processes: Processes = {
    server: server.child.pid!,
    // The server's backends (this connection's own is left out).
    backends: async () => (await backendsOf(admin, db.name)).filter((pid) => pid !== rows[0].pid),
  };
  try {
    const head = await fillLog(db.url, EVENTS);
    const agent = new http.Agent({ keepAlive: true });
    const sseMeter = await cpuMeter({
      server: () => [processes.server],
      postgres: processes.backends,
    });
    const sse = await countStream(server.baseUrl, AUTH, head - EVENTS + 1, head, agent);
    const sseCpu = cpuPerEvent(await sseMeter.stop(), sse.messages);
    agent.destroy();
    const sseRate = Math.round(sse.messages / (sse.ms / 1000));
    const sseClient = await sseClientRun(server.baseUrl, head, processes);
    const one = await groupRun(server.baseUrl, 'bench-1', 1, head, processes);
    const four = await groupRun(server.baseUrl, 'bench-4', 4, head, processes);
    const latency = await ackLatency(server.baseUrl);
    const floor = await groupFloor(db.url, head - EVENTS + 1, EVENTS, BATCH);
    console.log(
      JSON.stringify(
        {
          bench: 'groups',
          events: EVENTS,
          batch: BATCH,
          machine: { cpus: cpus().length, loadavg: loadavg().map((l) => Number(l.toFixed(2))) },
          plainSse: {
            messages: sse.messages,
            ms: Math.round(sse.ms),
            eventsPerSecond: sseRate,
            ...sseCpu,
          },
          plainSseClient: sseClient,
          group1: one,
          group4: four,
          ratio4ToSse: Number((four.eventsPerSecond / sseRate).toFixed(3)),
          ratio4ToSseClient: Number((four.eventsPerSecond / sseClient.eventsPerSecond).toFixed(3)),
          ratio1ToSseClient: Number((one.eventsPerSecond / sseClient.eventsPerSecond).toFixed(3)),
          goalRatio: 0.5,
          ackLatency: latency,
          goalAckP99Ms: 20,
          floor,
        },
        null,
        2,
      ),
    );
  } finally {
    await admin.end();
    await server.stop();
    await db.drop();
  }
}

await main();
