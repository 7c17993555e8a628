import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  DEV_AUTH,
  http,
  startServer,
  type HttpResponse,
  type TestServer,
} from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

const NDJSON = { ...DEV_AUTH, 'content-type': 'application/x-ndjson' };

/** POSTs NDJSON text (streamed in pieces, as the CLI sends a file) to the import route. */
async function importLines(
  baseUrl: string,
  lines: string[],
  headers: Record<string, string> = NDJSON,
): Promise<Pick<HttpResponse, 'status' | 'body'>> {
  const text = lines.join('\n') + '\n';
  const bytes = Buffer.from(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 4096)
        controller.enqueue(bytes.subarray(at, at + 4096));
      controller.close();
    },
  });
  const res = await fetch(`${baseUrl}/api/events/import`, {
    method: 'POST',
    headers,
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: await res.json() };
}

const line = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    messageType: 'Imported',
    userId: `u-${i % 7}`,
    content: { i, amount: i / 4 },
    ...extra,
  });

describe.each(['gapless', 'concurrent'] as const)('bulk import, %s mode', (ordering) => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_ORDERING: ordering,
      ORDINAL_GAP_TIMEOUT_MS: '60000',
      ORDINAL_TOKENS: 'writer:write-secret:write+read',
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const head = async () =>
    (await http(server.baseUrl, 'GET', '/api/events/head')).body.head as number;
  const count = async () =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM messages'))[0].n);

  it('stores every line in one contiguous range that a live SSE reader and a subscription each see once, in order', async () => {
    // Given a live SSE reader and a subscription, and single messages published while the import runs
    const start = await head();
    const sse = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=${start + 1}`,
      DEV_AUTH,
    );
    const applied: number[] = [];
    server.app.get(SubscriptionsService).subscribe({
      name: `import-audit-${ordering}`,
      stream: '$all',
      startAt: 'end',
      handle: (m) => void applied.push(m.id),
    });
    const n = 5000;
    const lines = Array.from({ length: n }, (_, i) => line(i));
    const importing = importLines(server.baseUrl, lines);
    const singles = Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        http(server.baseUrl, 'PUT', '/api/events/message', {
          messageType: 'Single',
          content: { i },
        }),
      ),
    );
    // When the import is done
    const res = await importing;
    const singleIndices = (await singles).map((r) => r.body.id as number);
    // Then it stored all of it, as first..last, every index there being its lines in file order
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ lines: n, imported: n, repeats: 0 });
    expect(res.body.last - res.body.first + 1).toBe(n);
    const rows = await db.query<{ index: string; i: number }>(
      `SELECT index, (body->>'i')::int AS i FROM messages WHERE index BETWEEN $1 AND $2 ORDER BY index`,
      [res.body.first, res.body.last],
    );
    expect(rows.map((r) => r.i)).toEqual(lines.map((_, i) => i));
    // and the single messages landed outside its range
    for (const index of singleIndices)
      expect(index < res.body.first || index > res.body.last).toBe(true);
    // and the log has no hole: the safe head reaches the highest index, and readers see every message once, in order
    const top = Number(
      (await db.query<{ m: string }>('SELECT max(index) AS m FROM messages'))[0].m,
    );
    const deadline = Date.now() + 30_000;
    while ((await head()) < top && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(await head()).toBe(top);
    expect(await count()).toBe(top);
    const expected = Array.from({ length: top - start }, (_, i) => start + 1 + i);
    await sse.waitFor(
      () => sse.indices().length >= expected.length,
      30_000,
      'every message on the SSE stream',
    );
    expect(sse.indices()).toEqual(expected);
    sse.close();
    const until = Date.now() + 30_000;
    while (!applied.includes(top) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    const importedSeen = applied.filter((i) => i >= res.body.first && i <= res.body.last);
    expect(importedSeen).toEqual(expected.filter((i) => i >= res.body.first && i <= res.body.last));
    expect(new Set(applied).size).toBe(applied.length);
    expect(applied).toEqual([...applied].sort((a, b) => a - b));
  }, 90_000);

  it('refuses a bad line with a 400 naming it and stores nothing of the import', async () => {
    const before = { head: await head(), count: await count() };
    for (const [bad, words] of [
      ['{"messageType":"Imported","content":{"n":9007199254740993}}', 'content.n'],
      ['{"messageType":"Imported","content":{"n":1},"extra":true}', 'unknown field'],
      ['{"messageType":"bad type!","content":{}}', 'messageType'],
      ['{"messageType":"Imported","content":{"s":"a\\u0000b"}}', 'NUL'],
      ['not json', 'not valid JSON'],
    ] as const) {
      const lines = Array.from({ length: 3000 }, (_, i) => line(i));
      lines[2500] = bad;
      const res = await importLines(server.baseUrl, lines);
      expect([bad, res.status, res.body.line]).toEqual([bad, 400, 2501]);
      expect(res.body.code).toBe('invalid_message');
      expect(res.body.message).toContain('Line 2501');
      expect(res.body.message).toContain(words);
    }
    expect({ head: await head(), count: await count() }).toEqual(before);
  });

  it('skips lines whose idempotency key is stored for the same message, and refuses a key reused for another', async () => {
    const lines = Array.from({ length: 10 }, (_, i) =>
      line(i, { idempotencyKey: `imp-${ordering}-${i}` }),
    );
    const first = await importLines(server.baseUrl, lines);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ imported: 10, repeats: 0 });
    // The same file again: every line a repeat, nothing stored
    const again = await importLines(server.baseUrl, [...lines, lines[3]]);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      lines: 11,
      imported: 0,
      repeats: 11,
      first: null,
      last: null,
    });
    // A key reused with another body: 422 naming the line, nothing of that import stored
    const before = await count();
    const reused = await importLines(server.baseUrl, [
      line(100),
      line(101, { idempotencyKey: `imp-${ordering}-4` }),
    ]);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused', line: 2 });
    expect(await count()).toBe(before);
    // Bodies the duplicate window would skip are imported: the import does not use it
    const dupes = await importLines(server.baseUrl, [line(1), line(1)]);
    expect(dupes.body).toMatchObject({ imported: 2 });
  });

  it('answers 503 with nothing stored when its database connection dies mid-import, and the next import works', async () => {
    // Given an import that has sent its first lines and waits to send the rest
    const before = { head: await head(), count: await count() };
    let release!: () => void;
    const rest = new Promise<void>((resolve) => (release = resolve));
    const encoder = new TextEncoder();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 1) await rest;
        if (sent === 2) return controller.close();
        controller.enqueue(
          encoder.encode(
            Array.from({ length: 500 }, (_, i) => line(sent * 500 + i)).join('\n') + '\n',
          ),
        );
        sent++;
      },
    });
    const answer = fetch(`${server.baseUrl}/api/events/import`, {
      method: 'POST',
      headers: NDJSON,
      body,
      duplex: 'half',
    } as RequestInit);
    const importer = async () =>
      (
        await db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'ordinal-import'`,
          [db.name],
        )
      )[0]?.pid;
    const deadline = Date.now() + 10_000;
    while (!(await importer()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    // When its connection is killed, then the rest of the body arrives
    await db.admin('SELECT pg_terminate_backend($1)', [await importer()]);
    release();
    const res = await answer;
    // Then the answer is a 503 saying nothing was imported, and nothing was
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      code: 'database_unavailable',
      message: expect.stringContaining('nothing was imported'),
    });
    expect({ head: await head(), count: await count() }).toEqual(before);
    // And the next import goes through
    const next = await importLines(server.baseUrl, [line(1), line(2)]);
    expect(next.status).toBe(201);
    expect(next.body.first).toBe(before.head + 1);
  });

  it('answers 415 for a body that is not NDJSON and 403 without the admin scope', async () => {
    const json = await http(server.baseUrl, 'POST', '/api/events/import', {
      messageType: 'A',
      content: {},
    });
    expect(json.status).toBe(415);
    expect(json.body.message).toContain('application/x-ndjson');
    const writer = await importLines(server.baseUrl, [line(1)], {
      authorization: 'Bearer write-secret',
      'content-type': 'application/x-ndjson',
    });
    expect(writer.status).toBe(403);
  });
});
