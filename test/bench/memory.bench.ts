/**
 * `npm run bench:memory`: the server's memory with many SSE streams, the server in its own
 * process with default settings (apps/eventstore/dist/main.js), the clients in this process.
 *
 * 1. Idle: the server's RSS at rest, then with IDLE (1,000) streams open at the head.
 * 2. Stalled: STALLED (100) streams that stop reading their socket after `connected`, while
 *    PUBLISHED (50,000) messages are published through the API (100 a request, 8 clients);
 *    the server's RSS is sampled every 25 ms (the peak) and read from /proc (VmHWM is the
 *    process's lifetime peak). Then the readers read again, and every one must get all
 *    PUBLISHED messages in order (nothing lost, nothing repeated) up to `stream-ended`.
 * 3. Large: LARGE_STALLED (20) streams stalled as in 2 while LARGE_PUBLISHED (1,000) messages
 *    of LARGE_BYTES (100 KB) are published; the peak RSS is reported beside the server's byte
 *    bound of all streams' buffers. Then the readers read again and every one must get every
 *    message in order; a stream the server dropped to stay within its bound is reopened from
 *    its Last-Event-ID, as an EventSource does (counted in `reconnects`).
 * 4. Large history: LARGE_STALLED readers opened at places spread over those messages, stalled
 *    after `connected`: the RSS once they wait with what they hold, beside the bound; then each
 *    must get every message from its start.
 * `BENCH_PHASES` (default `idle,stalled,large`; `large` runs 3 and 4) picks the phases.
 * Prints one JSON object. Figures are MB (10^6 bytes).
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './support/bench-database.js';
import { startChild, type ChildServer } from './support/child-server.js';

const here = dirname(fileURLToPath(import.meta.url));
/** `BENCH_SERVER_MAIN`: another build's server (e.g. main's, for a before/after figure). */
const serverMain =
  process.env.BENCH_SERVER_MAIN ??
  join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const IDLE = Number(process.env.BENCH_IDLE_STREAMS ?? 1000);
const STALLED = Number(process.env.BENCH_STALLED_STREAMS ?? 100);
const PUBLISHED = Number(process.env.BENCH_PUBLISHED ?? 50_000);
const LARGE_STALLED = Number(process.env.BENCH_LARGE_STALLED_STREAMS ?? 20);
const LARGE_PUBLISHED = Number(process.env.BENCH_LARGE_PUBLISHED ?? 1000);
const LARGE_BYTES = Number(process.env.BENCH_LARGE_BYTES ?? 100_000);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'idle,stalled,large').split(','));
/** The server's bound on what all streams together hold (its default unless the environment sets it). */
const STREAMS_BUFFER_BYTES = Number(process.env.ORDINAL_STREAMS_BUFFER_BYTES ?? 128 * 1024 * 1024);
const BATCH = 100;
const CLIENTS = 8;
const AUTH = { authorization: 'Bearer dev-ordinal-token' };
const MB = (bytes: number) => Number((bytes / 1e6).toFixed(1));

/** VmRSS and VmHWM of a process, in bytes. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

function request(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      `${baseUrl}${path}`,
      { method, headers: { ...AUTH, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** One SSE reader: counts `message` ids in order; can stop reading its socket and start again. */
class Reader {
  messages = 0;
  lastId = 0;
  ended = false;
  /** Times the server closed the stream before `stream-ended` and the reader reopened it from its Last-Event-ID. */
  reconnects = 0;
  private response: http.IncomingMessage | null = null;
  private request: http.ClientRequest | null = null;
  private text = '';
  private paused = false;
  private onConnected!: () => void;
  private onDone!: () => void;
  private onError!: (error: Error) => void;
  readonly connected: Promise<void>;
  readonly done: Promise<void>;

  constructor(
    private readonly baseUrl: string,
    private readonly startIndex: number,
    private readonly endIndex: number | undefined,
    private readonly stallAfterConnect: boolean,
  ) {
    this.connected = new Promise((resolve) => (this.onConnected = resolve));
    this.done = new Promise(
      (resolve, reject) => ((this.onDone = resolve), (this.onError = reject)),
    );
    this.done.catch(() => undefined);
    this.open();
  }

  /** Opens the stream; after the first time, from the last id received (an EventSource's Last-Event-ID). */
  private open(): void {
    const { endIndex } = this;
    const query = `startIndex=${this.startIndex}${endIndex === undefined ? '' : `&endIndex=${endIndex}`}`;
    const headers: Record<string, string> = { ...AUTH };
    if (this.lastId > 0) headers['last-event-id'] = String(this.lastId);
    this.text = '';
    this.request = http.get(
      `${this.baseUrl}/api/events/stream?${query}`,
      { headers, agent: false },
      (response) => {
        this.response = response;
        if (response.statusCode === 204 && this.lastId === endIndex) {
          this.ended = true;
          return this.onDone();
        }
        if (response.statusCode !== 200)
          return this.onError(new Error(`Stream answered ${response.statusCode}`));
        response.setEncoding('utf8');
        if (this.paused) response.pause();
        response.on('data', (chunk: string) => this.read(chunk));
        response.on('end', () => this.closed());
        response.on('error', () => this.closed());
      },
    );
    this.request.on('error', () => this.closed());
  }

  private read(chunk: string): void {
    this.text += chunk;
    let end: number;
    while ((end = this.text.indexOf('\n\n')) >= 0) {
      const event = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      if (event.startsWith('event: connected')) {
        this.onConnected();
        if (this.stallAfterConnect && this.reconnects === 0 && this.messages === 0) {
          this.paused = true;
          this.response?.pause();
        }
      } else if (event.startsWith('event: message\n')) {
        const idLine = /^id: (\d+)$/m.exec(event);
        if (idLine === null)
          return this.onError(
            new Error(`A message event without an id: ${JSON.stringify(event.slice(0, 200))}`),
          );
        const id = Number(idLine[1]);
        if (id !== this.lastId + 1 && this.lastId !== 0)
          this.onError(new Error(`A stream went from ${this.lastId} to ${id}`));
        this.lastId = id;
        this.messages++;
      } else if (event.startsWith('event: stream-ended')) {
        this.ended = true;
      }
    }
  }

  /** The connection ended: done after `stream-ended`, else reopened from the last id (once reading again). */
  private closed(): void {
    if (this.ended) return this.onDone();
    if (this.response === null && this.request === null) return;
    this.response = null;
    this.request = null;
    this.reconnects++;
    const reopen = () => (this.paused ? setTimeout(reopen, 50) : this.open());
    setTimeout(reopen, 50);
  }

  resume(): void {
    this.paused = false;
    this.response?.resume();
  }

  close(): void {
    this.ended = true;
    this.request?.destroy();
  }
}

async function publish(baseUrl: string, count: number, bodyBytes = 0): Promise<number> {
  // Large bodies go fewer a request, within the 1 MiB body limit.
  const batch = bodyBytes > 0 ? Math.max(1, Math.floor(900_000 / bodyBytes)) : BATCH;
  const padding = bodyBytes > 0 ? 'x'.repeat(bodyBytes) : undefined;
  let next = 0;
  const started = performance.now();
  const client = async () => {
    for (;;) {
      const first = next;
      if (first >= count) return;
      next += batch;
      const messages = Array.from({ length: Math.min(batch, count - first) }, (_, i) => ({
        messageType: 'OrderPlaced',
        userId: `customer-${(first + i) % 1000}`,
        content: {
          orderId: `o-${first + i}-${Math.random().toString(36).slice(2)}`,
          total: (first + i) % 500,
          lines: [{ sku: `SKU-${i % 50}`, qty: 1 }],
          ...(padding === undefined ? {} : { padding }),
        },
      }));
      const answer = await request(baseUrl, 'POST', '/api/events/messages', { messages });
      if (answer.status !== 201)
        throw new Error(`A batch answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return performance.now() - started;
}

/** A few figures of the server's /metrics (bytes, counts). */
async function metrics(baseUrl: string): Promise<Record<string, number>> {
  const text = (await request(baseUrl, 'GET', '/metrics')).text;
  const pick = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    heapUsedMB: MB(pick('nodejs_heap_size_used_bytes')),
    externalMB: MB(pick('nodejs_external_memory_bytes')),
    mailboxQueued: pick('ordinal_router_mailbox_queued_messages'),
    mailboxOverflows: pick('ordinal_router_mailbox_overflows_total'),
    // NaN against a server without them (an older build).
    streamDrops: pick('ordinal_router_stream_drops_total'),
  };
}

async function head(baseUrl: string): Promise<number> {
  const answer = await request(baseUrl, 'GET', '/api/events/head');
  return (JSON.parse(answer.text) as { head: number }).head;
}

/** Stalled readers while `count` messages (of `bodyBytes` padding) are published, then their catch-up. */
async function stalledPhase(
  server: ChildServer,
  streams: number,
  count: number,
  bodyBytes: number,
): Promise<Record<string, unknown>> {
  const pid = server.child.pid!;
  const start = (await head(server.baseUrl)) + 1;
  const end = start + count - 1;
  const stalled = Array.from(
    { length: streams },
    () => new Reader(server.baseUrl, start, end, true),
  );
  await Promise.all(stalled.map((r) => r.connected));
  const beforePublish = memoryOf(pid).rss;
  let peak = beforePublish;
  let peakHeap = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid).rss)), 25);
  const heapSampler = setInterval(
    () =>
      void metrics(server.baseUrl).then(
        (m) => (peakHeap = Math.max(peakHeap, m.heapUsedMB)),
        () => undefined,
      ),
    500,
  );
  const publishMs = await publish(server.baseUrl, count, bodyBytes);
  clearInterval(heapSampler);
  const afterPublish = memoryOf(pid).rss;
  const serverFigures = await metrics(server.baseUrl);
  const peakWhilePublishing = peak;
  const deliveredWhileStalled = stalled.reduce((sum, r) => sum + r.messages, 0);
  for (const reader of stalled) reader.resume();
  const resumed = performance.now();
  await Promise.all(stalled.map((r) => r.done));
  const catchUpMs = performance.now() - resumed;
  clearInterval(sampler);
  for (const reader of stalled) {
    if (reader.messages !== count || reader.lastId !== end)
      throw new Error(
        `A stalled reader got ${reader.messages} of ${count} (last ${reader.lastId})`,
      );
  }
  return {
    streams,
    published: count,
    ...(bodyBytes > 0 ? { messageBytes: bodyBytes } : {}),
    publishMs: Math.round(publishMs),
    rssBeforeMB: MB(beforePublish),
    rssPeakWhilePublishingMB: MB(peakWhilePublishing),
    rssAfterPublishMB: MB(afterPublish),
    rssPeakWhileCatchingUpMB: MB(peak),
    vmHwmMB: MB(memoryOf(pid).hwm),
    heapUsedPeakMB: peakHeap,
    afterPublish: serverFigures,
    messagesDeliveredWhileStalled: deliveredWhileStalled,
    reconnects: stalled.reduce((sum, r) => sum + r.reconnects, 0),
    catchUpAfterResumeMs: Math.round(catchUpMs),
    everyReaderGotAll: true,
  };
}

/**
 * Readers opened at `streams` places spread over `[first, last]` of the log (large messages
 * already stored) that stop reading after `connected`: the RSS once they have stalled (each
 * waits for its socket with what it holds), then their catch-up.
 */
async function historyPhase(
  server: ChildServer,
  streams: number,
  first: number,
  last: number,
): Promise<Record<string, unknown>> {
  const pid = server.child.pid!;
  const before = memoryOf(pid).rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid).rss)), 25);
  const step = Math.max(1, Math.floor((last - first + 1) / streams));
  const readers = Array.from(
    { length: streams },
    (_, i) => new Reader(server.baseUrl, first + i * step, last, true),
  );
  await Promise.all(readers.map((r) => r.connected));
  // A benchmark, not a test: give the streams time to fill their sockets and stall.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const stalledRss = memoryOf(pid).rss;
  const stalledFigures = await metrics(server.baseUrl);
  const peakWhileStalled = peak;
  for (const reader of readers) reader.resume();
  const resumed = performance.now();
  await Promise.all(readers.map((r) => r.done));
  const catchUpMs = performance.now() - resumed;
  clearInterval(sampler);
  readers.forEach((reader, i) => {
    const expected = last - (first + i * step) + 1;
    if (reader.messages !== expected || reader.lastId !== last)
      throw new Error(
        `A history reader got ${reader.messages} of ${expected} (last ${reader.lastId})`,
      );
  });
  return {
    streams,
    fromIndices: `${first}..${first + (streams - 1) * step} (every ${step})`,
    rssBeforeMB: MB(before),
    rssWhileStalledMB: MB(stalledRss),
    rssPeakWhileStalledMB: MB(peakWhileStalled),
    rssPeakWhileCatchingUpMB: MB(peak),
    whileStalled: stalledFigures,
    reconnects: readers.reduce((sum, r) => sum + r.reconnects, 0),
    catchUpAfterResumeMs: Math.round(catchUpMs),
    everyReaderGotAll: true,
  };
}

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  // BENCH_SERVER_NODE_ARGS: node flags for the server, e.g. `--max-old-space-size=96` to show what it holds (not garbage).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = await startChild(
    serverMain,
    { ORDINAL_ENV: 'development', DATABASE_URL: db.url, ORDINAL_LOG_FORMAT: 'json' },
    18900 + Math.floor(Math.random() * 90),
    /listening on/,
    nodeArgs,
  );
  const pid = server.child.pid!;
  try {
    const atRest = memoryOf(pid).rss;
    const result: Record<string, unknown> = {
      benchmark: 'memory',
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        node: process.version,
        server: serverMain,
        nodeArgs,
        loadAverage1m: Number(loadavg()[0].toFixed(2)),
      },
    };

    // 1. Idle streams at the head.
    if (PHASES.has('idle')) {
      const start = (await head(server.baseUrl)) + 1;
      const idle = Array.from(
        { length: IDLE },
        () => new Reader(server.baseUrl, start, undefined, false),
      );
      await Promise.all(idle.map((r) => r.connected));
      const withIdle = memoryOf(pid).rss;
      for (const reader of idle) reader.close();
      result.idle = {
        streams: IDLE,
        rssAtRestMB: MB(atRest),
        rssWithStreamsMB: MB(withIdle),
        perStreamKB: Number(((withIdle - atRest) / IDLE / 1e3).toFixed(1)),
      };
    }
    // 2. Stalled readers while small messages are published.
    if (PHASES.has('stalled')) result.stalled = await stalledPhase(server, STALLED, PUBLISHED, 0);
    // 3. Stalled readers while large messages are published, beside the server's bound.
    if (PHASES.has('large')) {
      result.large = {
        rssAtRestMB: MB(atRest),
        streamsBufferBoundMB: MB(STREAMS_BUFFER_BYTES),
        ...(await stalledPhase(server, LARGE_STALLED, LARGE_PUBLISHED, LARGE_BYTES)),
      };
      // 4. The same messages, now history: stalled readers spread over them hold pages, not live messages.
      const last = await head(server.baseUrl);
      result.largeHistory = {
        streamsBufferBoundMB: MB(STREAMS_BUFFER_BYTES),
        ...(await historyPhase(server, LARGE_STALLED, last - LARGE_PUBLISHED + 1, last)),
      };
    }
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await server.stop();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
