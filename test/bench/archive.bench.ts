/**
 * `npm run bench:archive` (issue 29, docs/storage.md "Archive"): the server in its own process
 * with its defaults, segments of BENCH_ROWS indices (default 1,000,000; ORDINAL_SEGMENT_SIZE)
 * and an archive directory (ORDINAL_ARCHIVE_DIR, ORDINAL_ARCHIVE_AFTER_MS=0, no schedule).
 * Three segments are filled straight with SQL (support/fill-log.ts: every 10th message in one
 * of 10,000 aggregate streams), all rows of the same shape. In one run:
 *
 * 1. archive: `POST /api/admin/segments/1/archive?throttlePercent=100` (full speed) timed
 *    (rows/s), beside a bare `COPY (SELECT * FROM <segment>) TO STDOUT` of the same segment
 *    read through pg-copy-streams to /dev/null in this process (the baseline), and beside the
 *    archive's own `COPY (SELECT index, m::text … ORDER BY index)` read the same way (what its
 *    query costs), with the CPU the server and PostgreSQL spent;
 * 2. sse: catch-up of segment 1 (archived) and of segment 2 (hot, the same size and shape),
 *    each from a fresh connection, alternating, each twice (first read, then a second with
 *    warm caches), with the CPU the server and its PostgreSQL backends spent on each;
 * 3. publish: single messages (`PUT /api/events/message`) from 32 wrk clients for a fixed
 *    window while segment 2 is archived with the server's default throttle
 *    (ORDINAL_ARCHIVE_THROTTLE_PERCENT), then while segment 3 is archived at full speed, each
 *    beside the mean of the windows without an archive just before and just after it: wrk
 *    starts once the archive's first COPY ran, and the segment is checked to be still hot
 *    (its archive uncommitted) when the window ends;
 * 4. size: `pg_total_relation_size` of every partition of messages before and after segment 1
 *    is archived, and the size of its archive files.
 *
 * BENCH_SECONDS (the publish window, default 6) is shortened to half the time segment 1's
 * archive took at full speed, so the window fits inside an archive. Prints one JSON object.
 */
import http from 'node:http';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild, type ChildServer } from './support/child-server.js';
import { fillLog } from './support/fill-log.js';
import { freePort } from './support/free-port.js';
import { countStream } from './support/sse-count.js';
import { runWrk } from './support/wrk-load.js';
import type { LoadResult } from './support/http-load.js';
import { cpuUs } from './support/proc-cpu.js';

const here = dirname(fileURLToPath(import.meta.url));
/** `BENCH_SERVER_MAIN`: another build's server (e.g. main's, for a before/after figure). */
const serverMain =
  process.env.BENCH_SERVER_MAIN ??
  join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CLIENTS = 32;
const AUTH = { authorization: 'Bearer dev-ordinal-token' };

const round2 = (x: number) => Number(x.toFixed(2));
const rate = (rows: number, ms: number) => Math.round((rows / ms) * 1000);
const load = () => round2(loadavg()[0]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const segmentTable = (first: number) => `messages_${String(first).padStart(16, '0')}`;

/** Bytes of every partition of messages: tables, indexes, TOAST. */
async function messagesBytes(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(relid)), 0)::text AS bytes FROM pg_partition_tree('messages')`,
  );
  return Number(rows[0].bytes);
}

/** Bytes of the files under `dir`. */
async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  return total;
}

/** `sql` (a COPY … TO STDOUT) read through pg-copy-streams to /dev/null: ms and bytes. */
async function copyToNull(url: string, sql: string): Promise<{ ms: number; bytes: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = performance.now();
    const stream = client.query(copyTo(sql));
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    await pipeline(stream, createWriteStream('/dev/null'));
    return { ms: performance.now() - started, bytes };
  } finally {
    await client.end();
  }
}

async function post(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: AUTH });
  return { status: res.status, body: await res.text() };
}

/** Archives the segment from `first` (`query`: e.g. `?throttlePercent=100`); throws unless the server answers 200. */
async function archive(baseUrl: string, first: number, query = ''): Promise<number> {
  const started = performance.now();
  const res = await post(baseUrl, `/api/admin/segments/${first}/archive${query}`);
  if (res.status !== 200)
    throw new Error(`archive of ${first} answered ${res.status}: ${res.body}`);
  return performance.now() - started;
}

/**
 * The CPU (ms) the server's process and the database's PostgreSQL backends spend from now to
 * `stop()`. Backends come and go (the archive has a connection of its own, closed when it
 * ends), so they are sampled every 100 ms: one seen after the start counts from 0, one gone
 * counts up to its last sample.
 */
function cpuMeter(admin: pg.Client, database: string, serverPid: number) {
  const server0 = cpuUs(serverPid);
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let started = false;
  const sample = async () => {
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    for (const { pid } of rows) {
      const us = cpuUs(pid);
      if (us === 0) continue;
      if (!first.has(pid)) first.set(pid, started ? 0 : us);
      last.set(pid, us);
    }
  };
  // One sample at a time, every 100 ms, until stopped.
  let sampling: Promise<void> = sample().then(() => {
    started = true;
  });
  const timer = setInterval(() => {
    sampling = sampling.then(sample);
  }, 100);
  return {
    ready: () => sampling,
    async stop(): Promise<{ server: number; postgres: number }> {
      clearInterval(timer);
      await sampling;
      await sample();
      let postgres = 0;
      for (const [pid, us] of last) postgres += us - (first.get(pid) ?? 0);
      return {
        server: Math.round((cpuUs(serverPid) - server0) / 1000),
        postgres: Math.round(postgres / 1000),
      };
    },
  };
}

interface SseRead {
  messages: number;
  perSec: number;
  ms: number;
  cpuMs: { server: number; postgres: number };
  load: number;
}

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  const archiveDir = await mkdtemp(join(tmpdir(), 'ordinal-bench-archive-'));
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  let server: ChildServer | null = null;
  try {
    server = await startChild(
      serverMain,
      {
        ORDINAL_ENV: 'development',
        DATABASE_URL: db.url,
        ORDINAL_LOG_FORMAT: 'json',
        ORDINAL_SEGMENT_SIZE: String(ROWS),
        ORDINAL_ARCHIVE_DIR: archiveDir,
        ORDINAL_ARCHIVE_AFTER_MS: '0',
        ORDINAL_ARCHIVE_CHECK_MS: '0',
      },
      await freePort(),
      /listening on/,
    );
    const { baseUrl } = server;
    const serverPid = server.child.pid!;
    const meter = async () => {
      const m = cpuMeter(admin, db.name, serverPid);
      await m.ready();
      return m;
    };
    await fetch(`${baseUrl}/api/events/head`, { headers: AUTH });

    // Three segments of the same shape, the head at their end (the StartMarker is index 1).
    const { rows: heads } = await admin.query<{ head: string }>(
      'SELECT position::text AS head FROM log_head WHERE id = 1',
    );
    const filled = performance.now();
    const head = await fillLog(db.url, 3 * ROWS - Number(heads[0].head), {
      streamEvery: 10,
      streams: 10_000,
    });
    const fillSeconds = round2((performance.now() - filled) / 1000);
    if (head !== 3 * ROWS) throw new Error(`head ${head}, not ${3 * ROWS}`);
    await admin.query('CHECKPOINT');
    const [first, second, third] = [1, ROWS + 1, 2 * ROWS + 1];

    // 4 (before). The log's size while every segment is hot.
    const sizeBefore = await messagesBytes(admin);

    // 1. The baselines (twice each: the second with the segment in cache, as the archive reads it), then the archive.
    const copyAll = `COPY (SELECT * FROM ${segmentTable(first)}) TO STDOUT`;
    const copyArchive = `COPY (SELECT index, m::text FROM messages m WHERE index >= ${first} AND index < ${second} ORDER BY index) TO STDOUT`;
    await copyToNull(db.url, copyAll);
    const copy = await copyToNull(db.url, copyAll);
    await copyToNull(db.url, copyArchive);
    const copyQuery = await copyToNull(db.url, copyArchive);
    const archiveLoad = load();
    const archiveCpu = await meter();
    const archiveMs = await archive(baseUrl, first, '?throttlePercent=100');
    const archiveSpent = await archiveCpu.stop();
    const sizeAfter = await messagesBytes(admin);
    const archiveBytes = await directoryBytes(join(archiveDir, segmentTable(first)));
    const { rows: chunkRows } = await admin.query<{ bytes: string }>(
      `SELECT pg_total_relation_size('archived_stream_chunks')::text AS bytes`,
    );

    // 2. SSE catch-up: archived (segment 1) and hot (segment 2), fresh connections, alternating.
    const sse = async (from: number, to: number): Promise<SseRead> => {
      const agent = new http.Agent({ keepAlive: false });
      const sseLoad = load();
      const cpu = await meter();
      const read = await countStream(baseUrl, AUTH, from, to, agent);
      const spent = await cpu.stop();
      agent.destroy();
      if (read.messages !== to - from + 1)
        throw new Error(`SSE ${from}..${to} read ${read.messages} messages`);
      return {
        messages: read.messages,
        perSec: rate(read.messages, read.ms),
        ms: Math.round(read.ms),
        cpuMs: spent,
        load: sseLoad,
      };
    };
    const archivedReads: SseRead[] = [];
    const hotReads: SseRead[] = [];
    for (let run = 0; run < 2; run++) {
      archivedReads.push(await sse(first, second - 1));
      hotReads.push(await sse(second, third - 1));
    }

    // 3. Publishing at 32 clients: before, during the archive of segment 2 (default throttle),
    //    during the archive of segment 3 (full speed), after.
    const window = Math.max(2, Math.min(SECONDS, Math.floor(archiveMs / 2000)));
    const publish = (tag: string): LoadResult & { load: number } => {
      const publishLoad = load();
      return {
        ...runWrk({
          url: `${baseUrl}/api/events/message`,
          clients: CLIENTS,
          seconds: window,
          headers: AUTH,
          bodyPrefix: tag,
        }),
        load: publishLoad,
      };
    };
    const publishDuring = async (segment: number, query: string) => {
      const archiving = archive(baseUrl, segment, query).then(
        (ms) => ({ ms }),
        (error: unknown) => ({ error }),
      );
      // wrk starts once the archive's first COPY ran (wrk blocks this process's loop while it runs).
      for (let waited = 0; ; waited += 20) {
        const { rows } = await admin.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'ordinal-archive' AND query LIKE 'COPY%'`,
          [db.name],
        );
        if (rows.length > 0) break;
        if (waited > 30_000) throw new Error(`the archive of ${segment} did not start its COPY`);
        await sleep(20);
      }
      const during = publish(`during-${segment}`);
      const { rows: tiers } = await admin.query<{ tier: string }>(
        'SELECT tier FROM log_segments WHERE first_index = $1',
        [segment],
      );
      const archived = await archiving;
      if ('error' in archived) throw archived.error;
      return {
        during,
        archiveRunningAtEnd: tiers[0].tier === 'hot',
        archiveSeconds: round2(archived.ms / 1000),
      };
    };
    runWrk({
      url: `${baseUrl}/api/events/message`,
      clients: CLIENTS,
      seconds: 5,
      headers: AUTH,
      bodyPrefix: 'warm',
    });
    // Each window during an archive is compared with the baselines just before and after it.
    const before = publish('before');
    const throttled = await publishDuring(second, '');
    const between = publish('between');
    const fullSpeed = await publishDuring(third, '?throttlePercent=100');
    const after = publish('after');
    const baselinePerSec = Math.round((before.msgPerSec + between.msgPerSec) / 2);
    const fullSpeedBaselinePerSec = Math.round((between.msgPerSec + after.msgPerSec) / 2);

    const report = {
      bench: 'archive',
      machine: { cpus: cpus().length },
      rows: ROWS,
      fillSeconds,
      archive: {
        rowsPerSec: rate(ROWS, archiveMs),
        seconds: round2(archiveMs / 1000),
        copyRowsPerSec: rate(ROWS, copy.ms),
        copyBytes: copy.bytes,
        ratio: round2(copy.ms / archiveMs),
        archiveQueryCopyRowsPerSec: rate(ROWS, copyQuery.ms),
        cpuMs: archiveSpent,
        load: archiveLoad,
      },
      sse: {
        archivedPerSec: archivedReads.map((r) => r.perSec),
        hotPerSec: hotReads.map((r) => r.perSec),
        ratio: round2(
          Math.max(...archivedReads.map((r) => r.perSec)) /
            Math.max(...hotReads.map((r) => r.perSec)),
        ),
        archived: archivedReads,
        hot: hotReads,
      },
      publish: {
        clients: CLIENTS,
        windowSeconds: window,
        baselinePerSec,
        duringArchivePerSec: throttled.during.msgPerSec,
        ratio: round2(throttled.during.msgPerSec / baselinePerSec),
        throttlePercent: 'server default (ORDINAL_ARCHIVE_THROTTLE_PERCENT)',
        archiveRunningAtEnd: throttled.archiveRunningAtEnd,
        archiveSecondsUnderLoad: throttled.archiveSeconds,
        fullSpeed: {
          baselinePerSec: fullSpeedBaselinePerSec,
          duringArchivePerSec: fullSpeed.during.msgPerSec,
          ratio: round2(fullSpeed.during.msgPerSec / fullSpeedBaselinePerSec),
          archiveRunningAtEnd: fullSpeed.archiveRunningAtEnd,
          archiveSecondsUnderLoad: fullSpeed.archiveSeconds,
        },
        runs: {
          before,
          during: throttled.during,
          between,
          duringFullSpeed: fullSpeed.during,
          after,
        },
      },
      size: {
        before: sizeBefore,
        after: sizeAfter,
        archiveBytes,
        archivedStreamChunksBytes: Number(chunkRows[0].bytes),
      },
      loadAverage: loadavg().map(round2),
    };
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  } finally {
    await server?.stop();
    await admin.end();
    await db.drop();
    await rm(archiveDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
