import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import { runCli } from '../support/cli-process.js';

/**
 * The archive's acceptance test (issue 29, docs/storage.md): archive two segments of a running
 * server, then an event stream from index 1 to live, a projection rebuilt from 1, a stream read
 * across the archived boundary and a page with tiers=hot; a corrupt file; restore and compare.
 */

const STREAM = 'order-archive';
const SEGMENT_1 = 'messages_0000000000000001';
/** The chunk file of segment 1 (the default chunk span, 10,000 indices, holds a whole segment of 1,000). */
const CHUNK_1 = `${SEGMENT_1}/0000000000000001.tsv.gz`;
/** Consumers with a read model in SQL: every message, and the `order` category (the stream's). */
const ALL = 'archive-all';
const ORDERS = 'archive-orders';

interface Message {
  id: number;
  [field: string]: unknown;
}

/** Text that the archive's COPY format escapes, and characters beyond ASCII. */
const TRICKY = 'line\nbreak\r "quoted" \\ back\\slash \t tab \b\f é 漢字 😀 \\n not a newline';

describe('archived segments through the server: SSE, pages, streams, projections, CLI (issue 29)', () => {
  let db: TestDatabase;
  let dir: string;
  let server: TestServer;
  let env: Record<string, string>;
  let cli: Record<string, string>;
  /** The head once the log is filled: every comparison covers 1..H. */
  let H: number;
  /** Indices of the stream's events (versions 1..5). */
  let streamIndices: number[];
  const applied: Record<string, number[]> = { [ALL]: [], [ORDERS]: [] };

  const get = (path: string, base = server.baseUrl) => http(base, 'GET', path);

  /** Every read the acceptance test compares, as the server answers it now. */
  interface Reads {
    /** The SSE stream from index 1: each message event's block, byte for byte. */
    sse: string[];
    /** Pages of 1,000 from 1 (aligned with the segments), each as answered (head aside). */
    pages: { fromIndex: number; nextIndex: number; messages: Message[] }[];
    /** Every message from pages of 300, of one type, of one correlation. */
    unaligned: Message[];
    typed: Message[];
    correlated: Message[];
    single: Record<number, unknown>;
    stream: { whole: unknown; boundary: unknown; version: unknown };
  }
  let before: Reads;
  let rowsBefore: { text: string }[];
  let modelBefore: Record<string, { idx: string; row: string }[]>;

  /** The SSE stream from 1 until it delivered H: the blocks of its message events up to H. */
  async function sseBlocks(
    base = server.baseUrl,
  ): Promise<{ blocks: string[]; sse: SseConnection }> {
    const sse = await SseConnection.open(base, '/api/events/stream?startIndex=1', DEV_AUTH);
    expect(sse.status).toBe(200);
    await sse.waitFor(() => sse.indices().includes(H), 20_000, `index ${H} on the stream`);
    const blocks = sse.events.flatMap((e, i) =>
      e.event === 'message' && Number(e.id) <= H ? [sse.blocks[i]] : [],
    );
    return { blocks, sse };
  }

  /** Pages of `limit` from `start` (with `query`) up to H; the part of each page at or below H. */
  async function pages(limit: number, query = '', base = server.baseUrl, start = 1) {
    const out: Reads['pages'] = [];
    for (let from = start; from <= H;) {
      const res = await get(`/api/events?fromIndex=${from}&limit=${limit}${query}`, base);
      expect(res.status).toBe(200);
      expect(res.body.nextIndex).toBeGreaterThan(from);
      out.push({
        fromIndex: from,
        nextIndex: Math.min(res.body.nextIndex, H + 1),
        messages: (res.body.messages as Message[]).filter((m) => m.id <= H),
      });
      from = res.body.nextIndex;
    }
    return out;
  }
  const flat = (read: Reads['pages']) => read.flatMap((p) => p.messages);

  async function streamReads() {
    const whole = await get(`/api/streams/${STREAM}?snapshot=false`);
    // versions 3 and 4: the last event in segment 1 and the first in segment 3
    const boundary = await get(`/api/streams/${STREAM}?snapshot=false&fromVersion=3&limit=2`);
    const version = await get(`/api/streams/${STREAM}/version`);
    for (const res of [whole, boundary, version]) expect(res.status).toBe(200);
    return { whole: whole.body, boundary: boundary.body, version: version.body };
  }

  async function readAll(): Promise<Reads> {
    const { blocks, sse } = await sseBlocks();
    sse.close();
    const single: Record<number, unknown> = {};
    for (const index of [1, 777, 1000, 1001, 2000, 2001, streamIndices[0]]) {
      const res = await get(`/api/events/${index}`);
      expect(res.status).toBe(200);
      single[index] = res.body;
    }
    return {
      sse: blocks,
      pages: await pages(1000),
      unaligned: flat(await pages(300)),
      typed: flat(await pages(1000, '&types=OrderStep,Placed')),
      correlated: flat(await pages(1000, '&correlationId=corr-2')),
      single,
      stream: await streamReads(),
    };
  }

  const rows = () =>
    db.query<{ text: string }>(
      'SELECT m::text AS text FROM messages m WHERE index <= $1 ORDER BY index',
      [H],
    );
  const model = async () => {
    const out: Record<string, { idx: string; row: string }[]> = {};
    for (const name of [ALL, ORDERS])
      out[name] = await db.query<{ idx: string; row: string }>(
        'SELECT idx::text AS idx, row FROM archive_model m WHERE consumer = $1 AND m.idx <= $2 ORDER BY m.idx',
        [name, H],
      );
    return out;
  };
  /** Waits (server-side, `atLeast`) until both consumers applied `index`. */
  async function projectionsAt(index: number): Promise<void> {
    const res = await get(`/api/projections?atLeast=${index}&timeoutMs=20000`);
    expect(res.body.reached).toBe(true);
  }
  const segments = async () =>
    (await http(server.baseUrl, 'GET', '/api/admin/segments')).body.segments as {
      firstIndex: number;
      tier: string;
      estimatedRows: number | null;
    }[];
  const tierOf = async (first: number) =>
    (await segments()).find((s) => s.firstIndex === first)?.tier;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'ordinal-archive-e2e-'));
    env = {
      ORDINAL_SEGMENT_SIZE: '1000',
      ORDINAL_ARCHIVE_DIR: dir,
      ORDINAL_ARCHIVE_AFTER_MS: '0',
      ORDINAL_ARCHIVE_CHECK_MS: '0',
      ORDINAL_DUPLICATE_WINDOW: '0',
    };
    await db.query(
      `CREATE TABLE archive_model (consumer text NOT NULL, idx bigint NOT NULL, row text NOT NULL,
                                   PRIMARY KEY (consumer, idx))`,
    );
    server = await startServer(db.url, env);
    cli = { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'dev-ordinal-token' };
    // Two projections of the server with a read model in SQL (cleared by an in-place rebuild).
    const subscriptions = server.app.get(SubscriptionsService);
    for (const [name, stream] of [
      [ALL, '$all'],
      [ORDERS, { category: 'order' }],
    ] as const)
      subscriptions.subscribe({
        name,
        stream,
        kind: 'projection',
        handle: async (message, ctx) => {
          applied[name].push(ctx.index);
          await ctx.manager.query(
            `INSERT INTO archive_model (consumer, idx, row) VALUES ($1, $2, $3)
             ON CONFLICT (consumer, idx) DO UPDATE SET row = excluded.row`,
            [name, ctx.index, JSON.stringify(message)],
          );
        },
        reset: async (manager) => {
          await manager.query('DELETE FROM archive_model WHERE consumer = $1', [name]);
        },
      });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function publish(count: number, offset: number): Promise<void> {
    const messages = Array.from({ length: count }, (_, i) => {
      const n = offset + i;
      return {
        messageType: n % 3 === 0 ? 'Shipped' : 'Placed',
        content: { n, text: TRICKY, nested: { list: [1, 2.5, -3, true, null], empty: {} } },
        ...(n % 4 === 0 ? { userId: `user-${n % 7}` } : {}),
        ...(n % 5 === 0 ? { metadata: { source: 'archive-e2e', note: TRICKY } } : {}),
        ...(n % 10 === 0 ? { idempotencyKey: `key-${n}` } : {}),
        ...(n % 2 === 0 ? { correlationId: `corr-${n % 4}` } : {}),
      };
    });
    const res = await http(server.baseUrl, 'POST', '/api/events/messages', { messages });
    expect(res.status).toBe(201);
  }
  async function append(expectedVersion: number | 'no_stream', steps: number[]) {
    const res = await http(server.baseUrl, 'POST', `/api/streams/${STREAM}/events`, {
      expectedVersion,
      events: steps.map((step) => ({
        eventType: 'OrderStep',
        data: { step, text: TRICKY },
        metadata: { step },
      })),
    });
    expect(res.status).toBe(201);
    return res.body as { firstIndex: number; lastIndex: number };
  }

  it('before archiving: a log of 2,500 messages, a stream in segments 1 and 3, every read recorded', async () => {
    // The StartMarker is index 1; then the stream's first three events, in segment 1
    const first = await append('no_stream', [1, 2, 3]);
    await publish(1000, 0);
    await publish(1000, 1000);
    // then its last two, in segment 3 (2001..3000)
    const last = await append(3, [4, 5]);
    const head = (await get('/api/events/head')).body.head as number;
    await publish(2500 - head, 2000);
    H = (await get('/api/events/head')).body.head as number;
    expect(H).toBe(2500);
    expect(first.lastIndex).toBeLessThanOrEqual(1000);
    expect(last.firstIndex).toBeGreaterThan(2000);
    streamIndices = [
      first.firstIndex,
      first.firstIndex + 1,
      first.lastIndex,
      last.firstIndex,
      last.lastIndex,
    ];

    before = await readAll();
    expect(before.sse).toHaveLength(H);
    expect(before.sse[776]).toMatch(/^event: message\nid: 777\ndata: \{"message":\{/);
    expect(before.pages.map((p) => [p.fromIndex, p.nextIndex, p.messages.length])).toEqual([
      [1, 1001, 1000],
      [1001, 2001, 1000],
      [2001, H + 1, H - 2000],
    ]);
    expect(before.unaligned).toEqual(flat(before.pages));
    expect(before.typed.length).toBeGreaterThan(1000);
    expect(before.correlated.length).toBeGreaterThan(500);
    const indicesOf = (read: unknown) =>
      (read as { events: { version: number; index: number }[] }).events.map((e) => [
        e.version,
        e.index,
      ]);
    expect(indicesOf(before.stream.whole)).toEqual(streamIndices.map((index, i) => [i + 1, index]));
    // (version 3 in segment 1, version 4 in segment 3)
    expect(indicesOf(before.stream.boundary)).toEqual([
      [3, streamIndices[2]],
      [4, streamIndices[3]],
    ]);
    rowsBefore = await rows();
    expect(rowsBefore).toHaveLength(H);

    await projectionsAt(H);
    modelBefore = await model();
    expect(modelBefore[ALL]).toHaveLength(H);
    expect(modelBefore[ORDERS].map((r) => Number(r.idx))).toEqual(streamIndices);
  });

  it('archives segment 1 through the CLI and segment 1001 through the route; lists them archived', async () => {
    const archived = await runCli(['segments', 'archive', '1'], cli);
    expect(archived.stderr).toBe('');
    expect(archived.code).toBe(0);
    expect(archived.stdout).toMatch(
      new RegExp(
        `^Archived segment 1\\.\\.1000 \\(${SEGMENT_1}\\): archived, 1000 rows, \\d+ bytes\\n$`,
      ),
    );
    const route = await http(server.baseUrl, 'POST', '/api/admin/segments/1001/archive');
    expect(route.status).toBe(200);
    expect(route.body).toMatchObject({
      firstIndex: 1001,
      lastIndex: 2000,
      tier: 'archived',
      estimatedRows: 1000,
      table: 'messages_0000000000001001',
      archivedAt: expect.any(String),
    });

    // Not sealed (the head is inside it), and already archived: refused, nothing changes
    const open = await http(server.baseUrl, 'POST', '/api/admin/segments/2001/archive');
    expect(open.status).toBe(409);
    expect(open.body.code).toBe('segment_not_archivable');
    const again = await runCli(['segments', 'archive', '1'], cli);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already archived');
    const due = await runCli(['segments', 'archive', '--due'], cli);
    expect(due.code).toBe(0);
    expect(due.stdout).toBe('No segment is due\n');

    const listed = await runCli(['segments', 'list'], cli);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toBe('Segments of 1000 indices');
    expect(lines[2]).toMatch(new RegExp(`^1 +1000 +archived +1000 +\\d+ +${SEGMENT_1}$`));
    expect(lines[3]).toMatch(/^1001 +2000 +archived +1000 +\d+ +messages_0000000000001001$/);
    expect(lines[4]).toMatch(/^2001 +3000 +hot +/);
    // The rows are in the files only: the tables are gone
    expect(await readdir(join(dir, SEGMENT_1))).toEqual(
      expect.arrayContaining(['manifest.json', '0000000000000001.tsv.gz']),
    );
    const [{ n }] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE index <= 2000`,
    );
    expect(n).toBe(0);
  });

  it('reads the archived log as before: SSE from 1 (the same bytes) into live, pages, one message, the stream across the boundary', async () => {
    const { blocks, sse } = await sseBlocks();
    try {
      expect(blocks).toEqual(before.sse);
      // The same connection goes on live
      const put = await http(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'AfterArchive',
        content: { live: true },
      });
      expect(put.status).toBe(201);
      await sse.waitFor(() => sse.indices().includes(put.body.id), 10_000, 'the live message');
      const live = sse.events.find((e) => e.event === 'message' && Number(e.id) === put.body.id);
      expect(live?.data.message).toMatchObject({
        messageType: 'AfterArchive',
        body: { live: true },
      });
      expect(sse.indices().filter((i) => i > H)).toEqual([put.body.id]);
    } finally {
      sse.close();
    }
    const after = await readAll();
    expect(after.pages).toEqual(before.pages);
    expect(after.unaligned).toEqual(before.unaligned);
    expect(after.typed).toEqual(before.typed);
    expect(after.correlated).toEqual(before.correlated);
    expect(after.single).toEqual(before.single);
    expect(after.stream).toEqual(before.stream);
  });

  it('tiers=hot: 409 index_archived naming the segment where a read reaches an archived one; the hot part reads', async () => {
    const page = await get('/api/events?fromIndex=1&tiers=hot');
    expect(page.status).toBe(409);
    expect(page.body.code).toBe('index_archived');
    expect(page.body.message).toContain('segment 1..1000');
    const second = await get('/api/events?fromIndex=1500&limit=10&tiers=hot');
    expect(second.status).toBe(409);
    expect(second.body.message).toContain('segment 1001..2000');
    const hot = await get('/api/events?fromIndex=2001&limit=1000&tiers=hot');
    expect(hot.status).toBe(200);
    expect((hot.body.messages as Message[]).filter((m) => m.id <= H)).toEqual(
      before.pages[2].messages,
    );

    const refused = await SseConnection.open(
      server.baseUrl,
      '/api/events/stream?startIndex=1&tiers=hot',
      DEV_AUTH,
    );
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 'index_archived' });
    const stream = await SseConnection.open(
      server.baseUrl,
      '/api/events/stream?startIndex=2001&endIndex=2010&tiers=hot',
      DEV_AUTH,
    );
    try {
      expect(stream.status).toBe(200);
      await stream.waitFor(() => stream.ended, 10_000, 'the end of the stream');
      expect(stream.indices()).toEqual(Array.from({ length: 10 }, (_, i) => 2001 + i));
      expect(stream.blocks.filter((b) => b.startsWith('event: message\n'))).toEqual(
        before.sse.slice(2000, 2010),
      );
    } finally {
      stream.close();
    }
  });

  it('a consumer group from the start answers 409 index_archived instead of passing the archived segments', async () => {
    const defined = await http(server.baseUrl, 'PUT', '/api/consumer-groups/archived-g1', {
      source: { types: ['F', 'S'] },
      from: 'start',
    });
    expect(defined.status).toBeLessThan(300);
    const fetched = await http(server.baseUrl, 'POST', '/api/consumer-groups/archived-g1/fetch', {
      memberId: 'm-1',
      max: 10,
      waitMs: 0,
    });
    expect(fetched.status).toBe(409);
    expect(fetched.body).toMatchObject({ code: 'index_archived' });
    expect(fetched.body.message).toMatch(/archived segment/);
    expect(
      (await http(server.baseUrl, 'DELETE', '/api/consumer-groups/archived-g1')).status,
    ).toBeLessThan(300);
  });

  it('a projection rebuilt from 1 after archiving builds the same read model', async () => {
    const head = (await get('/api/events/head')).body.head as number;
    await projectionsAt(head);
    applied[ALL].length = 0;
    applied[ORDERS].length = 0;
    // $all through the route, the category through the CLI (which waits until it caught up)
    const rebuilt = await http(
      server.baseUrl,
      'POST',
      `/api/projections/${ALL}/rebuild?mode=in-place`,
    );
    expect(rebuilt.status).toBe(202);
    const viaCli = await runCli(
      ['projections', 'rebuild', ORDERS, '--in-place', '--timeout', '30'],
      cli,
    );
    expect(viaCli.code).toBe(0);
    await projectionsAt(head);
    // Both replayed the archived ranges from index 1
    expect(new Set(applied[ALL]).size).toBeGreaterThanOrEqual(head);
    expect([...new Set(applied[ALL])].sort((a, b) => a - b).slice(0, 3)).toEqual([1, 2, 3]);
    expect(applied[ORDERS]).toEqual(streamIndices);
    expect(await model()).toEqual(modelBefore);
  });

  it('verify passes; a corrupt file is named (exit 6) and read as 503 archive_corrupt, never as wrong data', async () => {
    const verified = await runCli(['segments', 'verify', '1'], cli);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toBe('Segment 1: 1 files, 1000 rows, every checksum matches\n');

    const file = join(dir, ...CHUNK_1.split('/'));
    const original = await readFile(file);
    const corrupt = Buffer.from(original);
    corrupt[Math.floor(corrupt.length / 2)] ^= 0xff;
    await writeFile(file, corrupt);
    try {
      const failed = await runCli(['segments', 'verify', '1'], cli);
      expect(failed.code).toBe(6);
      expect(failed.stdout).toMatch(new RegExp(`^${CHUNK_1.replaceAll('.', '\\.')}: .+\\n$`));
      expect(failed.stderr).toContain("Segment 1's archive failed its check");
      const json = await runCli(['segments', 'verify', '1', '--json'], cli);
      expect(json.code).toBe(6);
      expect(JSON.parse(json.stdout)).toMatchObject({
        firstIndex: 1,
        ok: false,
        chunks: [{ file: CHUNK_1, ok: false, error: expect.any(String) }],
      });

      // A fresh server reads the file (the running one may hold the chunk, checked, in memory)
      const fresh = await startServer(db.url, env);
      try {
        for (const path of [
          '/api/events?fromIndex=1&limit=10',
          '/api/events?fromIndex=990',
          '/api/events/777',
        ]) {
          const res = await get(path, fresh.baseUrl);
          expect(res.status).toBe(503);
          expect(res.body.code).toBe('archive_corrupt');
          expect(res.body.message).toContain(CHUNK_1);
        }
        const stream = await get(`/api/streams/${STREAM}?snapshot=false`, fresh.baseUrl);
        expect(stream.status).toBe(503);
        expect(stream.body.code).toBe('archive_corrupt');
        // An event stream from there ends (the client resumes from its bookmark) without a message
        const broken = await SseConnection.open(
          fresh.baseUrl,
          '/api/events/stream?startIndex=1',
          DEV_AUTH,
        );
        try {
          expect(broken.status).toBe(200);
          await broken.waitFor(() => broken.ended, 10_000, 'the end of the stream');
          expect(broken.events.map((e) => e.event)).toEqual(['connected']);
        } finally {
          broken.close();
        }
        // Reported in /metrics: archived segments, and the failed reads of the file
        const metrics = await (await fetch(`${fresh.baseUrl}/metrics`)).text();
        expect(metrics).toMatch(/^ordinal_log_segments\{tier="archived"\} 2$/m);
        expect(metrics).toMatch(/^ordinal_archive_corrupt_total [1-9]\d*$/m);
        // The other archived segment and the hot one read as before
        expect(await pages(1000, '', fresh.baseUrl, 1001)).toEqual(before.pages.slice(1));
        const other = await SseConnection.open(
          fresh.baseUrl,
          '/api/events/stream?startIndex=1001&endIndex=1010',
          DEV_AUTH,
        );
        try {
          await other.waitFor(() => other.ended, 10_000, 'the end of the stream');
          expect(other.blocks.filter((b) => b.startsWith('event: message\n'))).toEqual(
            before.sse.slice(1000, 1010),
          );
        } finally {
          other.close();
        }
      } finally {
        await fresh.close();
      }

      // Restoring from a corrupt archive restores nothing
      const restore = await runCli(['segments', 'restore', '1'], cli);
      expect(restore.code).toBe(1);
      expect(restore.stderr).toContain('503');
      expect(await tierOf(1)).toBe('archived');
    } finally {
      await writeFile(file, original);
    }
    expect((await runCli(['segments', 'verify', '1'], cli)).code).toBe(0);
  });

  it('restored (segment 1 through the CLI, 1001 through the route): every read equals what it was before archiving', async () => {
    const restored = await runCli(['segments', 'restore', '1'], cli);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(
      /^Restored segment 1\.\.1000 \(messages_0000000000000001\): hot, /,
    );
    expect(await tierOf(1)).toBe('hot');
    // One hot, one archived: the reads still agree, and tiers=hot now reads segment 1
    expect(await readAll()).toEqual(before);
    const hot = await get('/api/events?fromIndex=1&limit=2000&tiers=hot');
    expect(hot.status).toBe(200);
    expect(hot.body.messages).toEqual(before.pages[0].messages);
    expect((await get(`/api/events?fromIndex=${hot.body.nextIndex}&tiers=hot`)).status).toBe(409);

    const route = await http(server.baseUrl, 'POST', '/api/admin/segments/1001/restore');
    expect(route.status).toBe(200);
    expect(route.body).toMatchObject({ firstIndex: 1001, tier: 'hot' });
    expect((await segments()).every((s) => s.tier === 'hot')).toBe(true);
    expect(await readAll()).toEqual(before);
    expect(await rows()).toEqual(rowsBefore);
    const sse = await SseConnection.open(
      server.baseUrl,
      '/api/events/stream?startIndex=1&endIndex=5&tiers=hot',
      DEV_AUTH,
    );
    await sse.waitFor(() => sse.ended, 10_000, 'the end of the stream');
    expect(sse.status).toBe(200);
    expect(sse.indices()).toEqual([1, 2, 3, 4, 5]);
  });
});
