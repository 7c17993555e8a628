/**
 * `npm run bench:scale`: the same server (its own process, default settings) over an empty log
 * and over a log of BENCH_SCALE_MESSAGES (default 5,000,000) messages filled with
 * generate_series (support/fill-log.ts; every 10th message in one of 50,000 aggregate
 * streams), side by side in the same run, their phases interleaved over BENCH_ROUNDS rounds:
 * single-message ingest at 32 clients (wrk), `GET /api/events/head`, a stream's version and an
 * aggregate read (wrk, 8 clients); SSE catch-up of BENCH_CATCHUP messages from index 1 and
 * from FILL - 100,000 on the large log; start-up time; then both again in concurrent mode.
 * Ends with EXPLAIN ANALYZE of the log's hot statements on the large log. Prints one JSON object.
 */
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { latestHashes, MESSAGE_COLUMNS, readOpenSkipped, TABLES } from '@ordinal/log/internal';
import { createBenchDatabase, type BenchDatabase } from './support/bench-database.js';
import { startChild, type ChildServer } from './support/child-server.js';
import { fillLog } from './support/fill-log.js';
import { countStream } from './support/sse-count.js';
import { runWrk, runWrkGet } from './support/wrk-load.js';
import type { LoadResult } from './support/http-load.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const FILL = Number(process.env.BENCH_SCALE_MESSAGES ?? 5_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const CATCHUP = Number(process.env.BENCH_CATCHUP ?? 100_000);
const AUTH = { authorization: 'Bearer dev-ordinal-token' };
const STREAM = 'scale-order-1';
let port = 19100 + Math.floor(Math.random() * 200);

type Ordering = 'gapless' | 'concurrent';

async function start(
  db: BenchDatabase,
  ordering: Ordering,
): Promise<{ server: ChildServer; startupMs: number }> {
  const started = performance.now();
  const server = await startChild(
    serverMain,
    {
      ORDINAL_ENV: 'development',
      DATABASE_URL: db.url,
      ORDINAL_LOG_FORMAT: 'json',
      ORDINAL_ORDERING: ordering,
    },
    port++,
    /listening on/,
  );
  // Ready for readers: the safe head answers (concurrent mode: the watermark has found its place)
  await fetch(`${server.baseUrl}/api/events/head`, { headers: AUTH });
  return { server, startupMs: Math.round(performance.now() - started) };
}

async function appendStream(baseUrl: string): Promise<void> {
  const res = await fetch(`${baseUrl}/api/streams/${STREAM}/events`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({
      expectedVersion: 'any',
      events: Array.from({ length: 20 }, (_, i) => ({
        eventType: 'LinePicked',
        data: { line: i },
      })),
    }),
  });
  if (res.status >= 300)
    throw new Error(`stream append answered ${res.status}: ${await res.text()}`);
}

interface Figures {
  ingest32: LoadResult;
  head: LoadResult;
  version: LoadResult;
  aggregate: LoadResult;
}

function measure(baseUrl: string, tag: string): Figures {
  const get = (path: string) =>
    runWrkGet({
      url: `${baseUrl}${path}`,
      clients: 8,
      seconds: Math.max(2, Math.round(SECONDS / 2)),
      headers: AUTH,
    });
  return {
    ingest32: runWrk({
      url: `${baseUrl}/api/events/message`,
      clients: 32,
      seconds: SECONDS,
      headers: AUTH,
      bodyPrefix: tag,
    }),
    head: get('/api/events/head'),
    version: get(`/api/streams/${STREAM}/version`),
    aggregate: get(`/api/streams/${STREAM}`),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratio = (large: number, empty: number) => Number((large / empty).toFixed(2));

function compare(empty: Figures[], large: Figures[]) {
  const keys = ['ingest32', 'head', 'version', 'aggregate'] as const;
  return Object.fromEntries(
    keys.map((k) => {
      const e = median(empty.map((f) => f[k].msgPerSec));
      const l = median(large.map((f) => f[k].msgPerSec));
      return [
        k,
        {
          emptyPerSec: e,
          largePerSec: l,
          largeOverEmpty: ratio(l, e),
          emptyP50Ms: median(empty.map((f) => f[k].p50Ms)),
          largeP50Ms: median(large.map((f) => f[k].p50Ms)),
          failures: [...empty, ...large].reduce((n, f) => n + f[k].failures, 0),
        },
      ];
    }),
  );
}

/** A node of PostgreSQL's EXPLAIN (FORMAT JSON) plan, as far as the report reads it. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows the plan's sequential scans read (returned or filtered out), over every node. */
function scannedRows(node: PlanNode): number {
  const own =
    node['Node Type'] === 'Seq Scan'
      ? (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)
      : 0;
  return own + (node.Plans ?? []).reduce((n, child) => n + scannedRows(child), 0);
}

/** One EXPLAIN (ANALYZE, FORMAT JSON) document. */
interface ExplainDocument {
  Plan: PlanNode;
  'Execution Time': number;
}

async function explain(
  url: string,
): Promise<Record<string, { ms: number; seqScan: boolean; plan: string }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const statements: Record<string, { text: string; values: unknown[] }> = {
    head: { text: `SELECT position FROM ${TABLES.logHead} WHERE id = 1`, values: [] },
    streamVersion: {
      text: `SELECT version FROM ${TABLES.streams} WHERE stream_id = $1`,
      values: ['bench-1234'],
    },
    aggregateEvents: {
      text: `SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages} WHERE stream_id = $1 AND stream_version > $2 ORDER BY stream_version`,
      values: ['bench-1234', 0],
    },
    pageAt4_9M: {
      text: `SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages} WHERE index >= $1 AND index <= $2 ORDER BY index LIMIT $3`,
      values: [FILL - 100_000, FILL, 1000],
    },
    maxIndex: { text: `SELECT max(index) FROM ${TABLES.messages}`, values: [] },
    latestHashes: latestHashes(2000),
    categoryPage: {
      text: `SELECT ${MESSAGE_COLUMNS} FROM ${TABLES.messages} WHERE category = $1 AND index > $2 ORDER BY index LIMIT $3`,
      values: ['bench', FILL - 100_000, 1000],
    },
    openSkipped: readOpenSkipped(FILL, null),
  };
  const out: Record<string, { ms: number; seqScan: boolean; plan: string }> = {};
  try {
    for (const [name, q] of Object.entries(statements)) {
      const { rows } = await client.query<{ 'QUERY PLAN': ExplainDocument[] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`,
        q.values,
      );
      const doc = rows[0]['QUERY PLAN'][0];
      const nodes: string[] = [];
      const walk = (p: PlanNode) => {
        nodes.push(
          `${p['Node Type']}${p['Index Name'] ? ` ${p['Index Name']}` : p['Relation Name'] ? ` ${p['Relation Name']}` : ''}`,
        );
        for (const c of p.Plans ?? []) walk(c);
      };
      walk(doc.Plan);
      out[name] = {
        ms: Number(doc['Execution Time'].toFixed(3)),
        // A sequential scan that read rows (the empty segment ahead of the head is scanned for nothing).
        seqScan: scannedRows(doc.Plan) > 0,
        plan: nodes.join(' > '),
      };
    }
  } finally {
    await client.end();
  }
  return out;
}

async function catchUp(baseUrl: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  const late = FILL - 100_000;
  await countStream(baseUrl, AUTH, late, late + 20_000, agent); // warm-up
  const runs = { fromStart: [] as number[], fromLate: [] as number[] };
  for (let r = 0; r < 2; r++) {
    for (const which of r % 2 === 0
      ? (['fromStart', 'fromLate'] as const)
      : (['fromLate', 'fromStart'] as const)) {
      const from = which === 'fromStart' ? 1 : late;
      const c = await countStream(baseUrl, AUTH, from, from + CATCHUP - 1, agent);
      if (c.messages !== CATCHUP)
        throw new Error(`catch-up from ${from} read ${c.messages} messages, expected ${CATCHUP}`);
      runs[which].push(Math.round((c.messages / c.ms) * 1000));
    }
  }
  agent.destroy();
  const s = Math.max(...runs.fromStart);
  const l = Math.max(...runs.fromLate);
  return {
    messages: CATCHUP,
    fromIndex1PerSec: s,
    [`fromIndex${late}PerSec`]: l,
    lateOverStart: ratio(l, s),
    runs,
  };
}

async function main(): Promise<void> {
  const began = performance.now();
  const loadBefore = loadavg();
  const dbEmpty = await createBenchDatabase();
  const dbLarge = await createBenchDatabase();
  const servers: ChildServer[] = [];
  try {
    // The large log: schema from a first start, the stream through the API, then the fill
    let large = await start(dbLarge, 'gapless');
    await appendStream(large.server.baseUrl);
    await large.server.stop();
    const fillStarted = performance.now();
    await fillLog(dbLarge.url, FILL, { streamEvery: 10, streams: 50_000 });
    const fillMs = Math.round(performance.now() - fillStarted);
    // A log that ran concurrent mode for a long time keeps every exactly released hole in log_skipped
    const c = new pg.Client({ connectionString: dbLarge.url });
    await c.connect();
    await c.query(
      `INSERT INTO log_skipped (position, held_ms, released_exactly) SELECT g, 0, true FROM generate_series(2, 200001) g ON CONFLICT DO NOTHING`,
    );
    await c.query('VACUUM (ANALYZE) log_skipped');
    // Write the fill out now, or its checkpoint lands in whichever phase runs next.
    await c.query('CHECKPOINT');
    await c.end();

    const result: Record<string, unknown> = {};
    for (const ordering of ['gapless', 'concurrent'] as Ordering[]) {
      large = await start(dbLarge, ordering);
      const empty = await start(dbEmpty, ordering);
      servers.push(large.server, empty.server);
      if (ordering === 'gapless') await appendStream(empty.server.baseUrl);
      // Warm-up: JIT, pools and caches on both
      runWrk({
        url: `${empty.server.baseUrl}/api/events/message`,
        clients: 32,
        seconds: 1,
        headers: AUTH,
        bodyPrefix: `warm-e-${ordering}`,
      });
      runWrk({
        url: `${large.server.baseUrl}/api/events/message`,
        clients: 32,
        seconds: 1,
        headers: AUTH,
        bodyPrefix: `warm-l-${ordering}`,
      });
      const figures = { empty: [] as Figures[], large: [] as Figures[] };
      for (let r = 0; r < ROUNDS; r++) {
        const order = r % 2 === 0 ? (['large', 'empty'] as const) : (['empty', 'large'] as const);
        for (const which of order)
          figures[which].push(
            measure(
              (which === 'large' ? large : empty).server.baseUrl,
              `${ordering}-${which}-${r}`,
            ),
          );
      }
      result[ordering] = {
        startupMs: { empty: empty.startupMs, large: large.startupMs },
        ...compare(figures.empty, figures.large),
        catchUp: ordering === 'gapless' ? await catchUp(large.server.baseUrl) : undefined,
      };
      await Promise.all([large.server.stop(), empty.server.stop()]);
      servers.length = 0;
    }
    const plans = await explain(dbLarge.url);
    console.log(
      JSON.stringify(
        {
          benchmark: 'scale',
          date: new Date().toISOString(),
          command: 'npm run bench:scale',
          largeLog: FILL,
          fillMs,
          secondsPerPhase: SECONDS,
          rounds: ROUNDS,
          machine: {
            cpus: cpus().length,
            model: cpus()[0]?.model,
            loadavgBefore: loadBefore.map((l) => Number(l.toFixed(2))),
            loadavgAfter: loadavg().map((l) => Number(l.toFixed(2))),
          },
          goals:
            'ingest32 largeOverEmpty >= 0.8; catch-up lateOverStart ~ 1; head, version, aggregate largeOverEmpty ~ 1',
          ...result,
          explainAtLargeLog: plans,
          totalSeconds: Math.round((performance.now() - began) / 1000),
        },
        null,
        2,
      ),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await dbEmpty.drop();
    await dbLarge.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
