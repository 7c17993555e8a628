import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEV_AUTH, http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import { brokerUrl, collect, connectTestBroker, uniqueName } from '../support/amqp-broker.js';

describe('Streams that end: metadata, category rules, tombstones on every reader, scavenge', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    http(server.baseUrl, method, path, body, { ...DEV_AUTH, ...headers });
  const events = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      eventType: 'Noted',
      data: { secret: `s${i + 1}` },
      metadata: { by: 'test' },
    }));

  /** Every record of `[from, to]` through SSE history: `[event name, id]` pairs. */
  async function sseHistory(from: number, to: number) {
    const stream = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=${from}&endIndex=${to}`,
      DEV_AUTH,
    );
    try {
      await stream.waitFor(() => stream.ended, 10_000, 'the end of the stream');
      return stream.events.filter((e) => e.event === 'message' || e.event === 'tombstone');
    } finally {
      stream.close();
    }
  }

  it('truncateBefore hides versions at once; a scavenge erases them in place and every reader gets tombstones', async () => {
    // Given a stream of four events
    const appended = await call('POST', '/api/streams/note-1/events', {
      expectedVersion: 'no_stream',
      events: events(4),
    });
    const first = appended.body.firstIndex as number;
    // When its metadata says truncateBefore 3
    const put = await call('PUT', '/api/streams/note-1/metadata', {
      truncateBefore: 3,
      custom: { owner: 'ops' },
    });
    expect(put.body).toEqual({
      streamId: 'note-1',
      metadataVersion: 1,
      truncateBefore: 3,
      custom: { owner: 'ops' },
    });
    // Then a stream read starts at 3 and says what is hidden
    const read = await call('GET', '/api/streams/note-1');
    expect(read.body.events.map((e: { version: number }) => e.version)).toEqual([3, 4]);
    expect(read.body.hidden).toEqual({ beforeVersion: 3, reason: 'truncated' });
    // And the log's readers get positions 1-2 as tombstones at once, before any scavenge
    const page = await call('GET', `/api/events?fromIndex=${first}&limit=4`);
    expect(page.body.messages.map((m: { tombstone?: { reason: string } }) => m.tombstone)).toEqual([
      { reason: 'truncated' },
      { reason: 'truncated' },
      undefined,
      undefined,
    ]);
    expect((await sseHistory(first, first + 3)).map((e) => [e.event, Number(e.id)])).toEqual([
      ['tombstone', first],
      ['tombstone', first + 1],
      ['message', first + 2],
      ['message', first + 3],
    ]);
    // (a throttle outside 1-100 is refused, naming it, and nothing runs)
    for (const bad of ['0', '101', 'half']) {
      const refused = await call('POST', `/api/admin/scavenge?throttlePercent=${bad}`);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/throttlePercent/);
    }
    // When a scavenge runs to the end (throttled to a quarter of its time)
    const run = await call('POST', '/api/admin/scavenge?wait=true&batchSize=3&throttlePercent=25');
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: 'finished', rowsErased: 2 });
    expect(run.body.bytesFreed).toBeGreaterThan(0);
    // Then positions 1-2 read back as scavenged tombstones everywhere, the rest untouched
    const one = await call('GET', `/api/events/${first}`);
    expect(one.body).toEqual({
      id: first,
      messageType: 'Noted',
      createdAt: expect.any(String),
      streamId: 'note-1',
      streamVersion: 1,
      correlationId: expect.any(String),
      causationId: expect.any(String),
      tombstone: { reason: 'scavenged' },
    });
    const after = await sseHistory(first, first + 3);
    expect(after.map((e) => [e.event, Number(e.id)])).toEqual([
      ['tombstone', first],
      ['tombstone', first + 1],
      ['message', first + 2],
      ['message', first + 3],
    ]);
    expect(after[0].data.tombstone.tombstone).toEqual({ reason: 'scavenged' });
    expect(after[2].data.message.body).toEqual({ secret: 's3' });
    // And in the table the bodies and metadata are gone, the rows and indices kept
    const rows = await db.query<{
      index: string;
      body: unknown;
      metadata: unknown;
      erased: string | null;
    }>(
      `SELECT index::text, body, metadata, erased FROM messages WHERE stream_id = 'note-1' ORDER BY index`,
    );
    expect(rows).toEqual([
      { index: String(first), body: null, metadata: null, erased: 'truncated' },
      { index: String(first + 1), body: null, metadata: null, erased: 'truncated' },
      { index: String(first + 2), body: { secret: 's3' }, metadata: { by: 'test' }, erased: null },
      { index: String(first + 3), body: { secret: 's4' }, metadata: { by: 'test' }, erased: null },
    ]);
    // And a replayable interface started now replays them as tombstones (header and body), the rest whole
    const broker = await connectTestBroker();
    const name = uniqueName('retention-replay');
    const dir = mkdtempSync(join(tmpdir(), 'ordinal-retention-'));
    const file = join(dir, 'interfaces.json');
    writeFileSync(file, JSON.stringify({ interfaces: [{ name, type: 'replayable' }] }));
    const replaying = await startServer(db.url, {
      AMQP_URL: brokerUrl(),
      ORDINAL_INTERFACES: file,
      ORDINAL_AMQP_INPUT_QUEUE: 'off',
      ORDINAL_AMQP_CONNECTION_NAME: name,
    });
    try {
      const sink = await collect(broker, `${name}.sink`);
      const index = (m: { properties: { headers?: Record<string, unknown> } }) =>
        Number(m.properties.headers?.index);
      await waitFor(
        () => sink.messages.some((m) => index(m) === first + 3),
        30_000,
        'the replay to reach the stream',
      );
      const replayed = sink.messages
        .filter((m) => index(m) >= first && index(m) <= first + 3)
        .map((m) => [
          index(m),
          m.properties.headers?.tombstone ?? null,
          JSON.parse(m.content.toString()) as unknown,
        ]);
      expect(replayed).toEqual([
        [first, 'scavenged', expect.objectContaining({ tombstone: { reason: 'scavenged' } })],
        [first + 1, 'scavenged', expect.objectContaining({ tombstone: { reason: 'scavenged' } })],
        [first + 2, null, { secret: 's3' }],
        [first + 3, null, { secret: 's4' }],
      ]);
      expect(JSON.stringify(replayed.slice(0, 2))).not.toContain('"secret"');
      await sink.stop();
    } finally {
      await replaying.close();
      await broker.deleteQueues(`${name}.sink`, `${name}.ack`);
      await broker.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // And a second run erases nothing more (idempotent)
    const again = await call('POST', '/api/admin/scavenge?wait=true');
    expect(again.body).toMatchObject({ status: 'finished', rowsErased: 0 });
    const status = await call('GET', '/api/admin/scavenge');
    expect(status.body.runs.slice(0, 2).map((r: { rowsErased: number }) => r.rowsErased)).toEqual([
      0, 2,
    ]);
  });

  it('a scavenge of bodies smaller than the null left in their place frees 0 bytes, never less', async () => {
    // Given nothing hidden is left unerased (a first run erases what earlier tests hid)
    expect((await call('POST', '/api/admin/scavenge?wait=true')).body.status).toBe('finished');
    // And a deleted stream of two empty events (`{}` is stored smaller than `null`)
    await call('POST', '/api/streams/cli-1/events', {
      expectedVersion: 'no_stream',
      events: [
        { eventType: 'Noted', data: {} },
        { eventType: 'Noted', data: {} },
      ],
    });
    expect((await call('DELETE', '/api/streams/cli-1')).status).toBe(204);
    // When a scavenge erases them
    const run = await call('POST', '/api/admin/scavenge?wait=true');
    expect(run.body).toMatchObject({ status: 'finished', rowsErased: 2 });
    // Then it freed no negative number of bytes, in its answer and in the list of runs
    expect(run.body.bytesFreed).toBeGreaterThanOrEqual(0);
    const status = await call('GET', '/api/admin/scavenge');
    expect(status.body.runs[0]).toMatchObject({ id: run.body.id, rowsErased: 2 });
    expect(status.body.runs[0].bytesFreed).toBeGreaterThanOrEqual(0);
  });

  it('a category rule applies to every stream of the category; a stream setting wins', async () => {
    // Given a rule keeping only the newest event of every audit stream
    const rule = await call('PUT', '/api/streams/audit-*/metadata', { maxCount: 1 });
    expect(rule.body).toMatchObject({ streamId: 'audit-*', maxCount: 1, metadataVersion: 1 });
    await call('POST', '/api/streams/audit-1/events', { expectedVersion: 0, events: events(3) });
    await call('POST', '/api/streams/audit-2/events', { expectedVersion: 0, events: events(3) });
    await call('PUT', '/api/streams/audit-2/metadata', { maxCount: 2 });
    // Then reads see the newest one (two where the stream says so)
    const one = await call('GET', '/api/streams/audit-1');
    expect(one.body.events.map((e: { version: number }) => e.version)).toEqual([3]);
    expect(one.body.hidden).toEqual({ beforeVersion: 3, reason: 'truncated' });
    const two = await call('GET', '/api/streams/audit-2');
    expect(two.body.events.map((e: { version: number }) => e.version)).toEqual([2, 3]);
  });

  it('maxAge hides old events as expired', async () => {
    // Given a stream whose first two events are an hour old
    await call('POST', '/api/streams/temp-1/events', { expectedVersion: 0, events: events(3) });
    await db.query(
      `UPDATE messages SET created_at = now() - interval '1 hour' WHERE stream_id = 'temp-1' AND stream_version <= 2`,
    );
    // When it may keep events ten minutes
    await call('PUT', '/api/streams/temp-1/metadata', { maxAge: 600 });
    // Then they are hidden as expired, in stream reads and in the log
    const read = await call('GET', '/api/streams/temp-1');
    expect(read.body.events.map((e: { version: number }) => e.version)).toEqual([3]);
    expect(read.body.hidden).toEqual({ beforeVersion: 3, reason: 'expired' });
    const page = await call(
      'GET',
      `/api/events?fromIndex=${read.body.events[0].index - 2}&limit=3`,
    );
    expect(
      page.body.messages.map((m: { tombstone?: { reason: string } }) => m.tombstone?.reason),
    ).toEqual(['expired', 'expired', undefined]);
  });

  it('a stored maxAge too large for a timestamp breaks no reader and no scavenge', async () => {
    // Given a stream and a category whose maxAge is 2^53 - 1 seconds (what the API accepted
    // before it was bounded; a timestamp that far back does not exist)
    const huge = String(Number.MAX_SAFE_INTEGER);
    const big = await call('POST', '/api/streams/big-1/events', {
      expectedVersion: 'no_stream',
      events: events(2),
    });
    const cat = await call('POST', '/api/streams/bigcat-1/events', {
      expectedVersion: 'no_stream',
      events: events(1),
    });
    const first = big.body.firstIndex as number;
    const last = cat.body.lastIndex as number;
    await db.query(
      `INSERT INTO stream_states (stream_id, max_age, metadata_version) VALUES ('big-1', $1, 1)`,
      [huge],
    );
    await db.query(
      `INSERT INTO category_rules (category, max_age, metadata_version) VALUES ('bigcat', $1, 1)`,
      [huge],
    );
    // Then nothing is expired: a page of the log, one message, the streams, SSE history
    const page = await call('GET', `/api/events?fromIndex=1&limit=1000`);
    expect(page.status).toBe(200);
    const ours = page.body.messages.filter((m: { id: number }) => m.id >= first && m.id <= last);
    expect(ours.map((m: { id: number; tombstone?: unknown }) => [m.id, m.tombstone])).toEqual([
      [first, undefined],
      [first + 1, undefined],
      [last, undefined],
    ]);
    const one = await call('GET', `/api/events/${first}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: first, body: { secret: 's1' } });
    const stream = await call('GET', '/api/streams/big-1');
    expect(stream.status).toBe(200);
    expect(stream.body.events.map((e: { version: number }) => e.version)).toEqual([1, 2]);
    const inCategory = await call('GET', '/api/streams/bigcat-1');
    expect(inCategory.status).toBe(200);
    expect(inCategory.body.events.map((e: { version: number }) => e.version)).toEqual([1]);
    expect((await sseHistory(first, last)).map((e) => [e.event, Number(e.id)])).toEqual([
      ['message', first],
      ['message', first + 1],
      ['message', last],
    ]);
    // And a consumer group over the whole log is served
    const group = await call('PUT', '/api/consumer-groups/big-all', { source: { all: true } });
    expect(group.status).toBe(201);
    const fetched = await call('POST', '/api/consumer-groups/big-all/fetch', {
      memberId: 'm1',
      max: 1000,
    });
    expect(fetched.status).toBe(200);
    expect(fetched.body.events.map((e: { index: number }) => e.index)).toEqual(
      expect.arrayContaining([first, first + 1, last]),
    );
    // And a scavenge finishes and erases none of them
    const run = await call('POST', '/api/admin/scavenge?wait=true');
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('finished');
    const erased = await db.query(
      `SELECT index FROM messages WHERE stream_id IN ('big-1', 'bigcat-1') AND erased IS NOT NULL`,
    );
    expect(erased).toEqual([]);
  });

  it('refuses a maxAge beyond 100 years (3,155,760,000 s), naming the field', async () => {
    for (const target of ['old-1', 'old-*']) {
      const refused = await call('PUT', `/api/streams/${target}/metadata`, {
        maxAge: 3_155_760_001,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/^maxAge: /);
      expect(refused.body.fields.map((f: { field: string }) => f.field)).toEqual(['maxAge']);
      const huge = await call('PUT', `/api/streams/${target}/metadata`, {
        maxAge: Number.MAX_SAFE_INTEGER,
      });
      expect(huge.status).toBe(400);
      const kept = await call('PUT', `/api/streams/${target}/metadata`, { maxAge: 3_155_760_000 });
      expect(kept.status).toBe(200);
      expect(kept.body).toMatchObject({ maxAge: 3_155_760_000, metadataVersion: 1 });
    }
  });

  it('metadata writes are conditional on their own version and validated', async () => {
    await call('PUT', '/api/streams/cond-1/metadata', { maxCount: 5 });
    const stale = await call(
      'PUT',
      '/api/streams/cond-1/metadata',
      { maxCount: 4 },
      { 'if-match': '"0"' },
    );
    expect(stale.status).toBe(409);
    expect(stale.headers.get('ordinal-current-version')).toBe('1');
    const ok = await call('PUT', '/api/streams/cond-1/metadata?expectedVersion=1', { maxCount: 4 });
    expect(ok.body).toMatchObject({ metadataVersion: 2, maxCount: 4 });
    expect((await call('PUT', '/api/streams/cond-1/metadata', { maxCount: 0 })).status).toBe(400);
    expect((await call('PUT', '/api/streams/cond-1/metadata', { maxAge: 'soon' })).status).toBe(
      400,
    );
    expect((await call('GET', '/api/streams/never-1/metadata')).body).toEqual({
      streamId: 'never-1',
      metadataVersion: 0,
    });
  });
});
