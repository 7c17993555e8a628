import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';

type State = 'new' | 'live' | 'deleted' | 'tombstoned';

/** How an append is told its expected version: a body field or a conditional header. */
type Variant = { name: string; body?: number | string; headers?: Record<string, string> };

const VARIANTS: Variant[] = [
  { name: 'any', body: 'any' },
  { name: 'no_stream', body: 'no_stream' },
  { name: '0', body: 0 },
  { name: 'exact 2', body: 2 },
  { name: 'exact 1', body: 1 },
  { name: 'stream_exists', body: 'stream_exists' },
  { name: 'If-Match "2"', headers: { 'if-match': '"2"' } },
  { name: 'If-Match *', headers: { 'if-match': '*' } },
  { name: 'If-None-Match *', headers: { 'if-none-match': '*' } },
];

/**
 * What each variant answers in each state: the status, and the version after a 201 or the
 * current version a 409 names. A live or deleted stream is at version 2 before the append.
 */
const EXPECTED: Record<State, Record<string, [number, number | string]>> = {
  new: {
    any: [201, 1],
    no_stream: [201, 1],
    '0': [201, 1],
    'exact 2': [409, 0],
    'exact 1': [409, 0],
    stream_exists: [409, 0],
    'If-Match "2"': [409, 0],
    'If-Match *': [409, 0],
    'If-None-Match *': [201, 1],
  },
  live: {
    any: [201, 3],
    no_stream: [409, 2],
    '0': [409, 2],
    'exact 2': [201, 3],
    'exact 1': [409, 2],
    stream_exists: [201, 3],
    'If-Match "2"': [201, 3],
    'If-Match *': [201, 3],
    'If-None-Match *': [409, 2],
  },
  deleted: {
    any: [201, 3],
    no_stream: [201, 3],
    '0': [201, 3],
    'exact 2': [404, 'stream_deleted'],
    'exact 1': [404, 'stream_deleted'],
    stream_exists: [404, 'stream_deleted'],
    'If-Match "2"': [404, 'stream_deleted'],
    'If-Match *': [404, 'stream_deleted'],
    'If-None-Match *': [201, 3],
  },
  tombstoned: Object.fromEntries(
    VARIANTS.map((v) => [v.name, [410, 'stream_tombstoned'] as [number, string]]),
  ),
};

describe('Streams that end: expected versions, soft delete and tombstones over REST', () => {
  let db: TestDatabase;
  let server: TestServer;
  let streams = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    http(server.baseUrl, method, path, body, {
      authorization: 'Bearer dev-ordinal-token',
      ...headers,
    });
  const event = (n: number) => ({ eventType: 'ItemAdded', data: { n } });

  /** A fresh stream in `state` (live and deleted ones at version 2). */
  async function streamIn(state: State): Promise<string> {
    const id = `cart-${++streams}`;
    if (state === 'new') return id;
    expect(
      (
        await call('POST', `/api/streams/${id}/events`, {
          expectedVersion: 0,
          events: [event(1), event(2)],
        })
      ).status,
    ).toBe(201);
    if (state === 'deleted') expect((await call('DELETE', `/api/streams/${id}`)).status).toBe(204);
    if (state === 'tombstoned')
      expect((await call('DELETE', `/api/streams/${id}?mode=tombstone`)).status).toBe(204);
    return id;
  }

  const cases = (['new', 'live', 'deleted', 'tombstoned'] as State[]).flatMap((state) =>
    VARIANTS.map((variant) => [state, variant.name, variant] as const),
  );

  it.each(cases)('a %s stream, expected version %s', async (state, name, variant) => {
    // Given a stream in that state
    const id = await streamIn(state);
    // When one event is appended with that expected version
    const res = await call(
      'POST',
      `/api/streams/${id}/events`,
      {
        ...(variant.body === undefined ? {} : { expectedVersion: variant.body }),
        events: [event(9)],
      },
      variant.headers,
    );
    // Then the answer is the table's
    const [status, value] = EXPECTED[state][name];
    expect(res.status).toBe(status);
    if (status === 201) expect(res.body.version).toBe(value);
    if (status === 409) {
      expect(res.body).toMatchObject({ code: 'version_conflict', current: value });
      expect(res.headers.get('ordinal-current-version')).toBe(String(value));
    }
    if (status === 404 || status === 410) expect(res.body.code).toBe(value);
  });

  it('a soft-deleted stream reads 404 with its last version, $all still yields every index, and no_stream re-creates it once', async () => {
    // Given a stream of three events, soft-deleted
    const head0 = (await call('GET', '/api/events/head')).body.head as number;
    const id = `order-${++streams}`;
    await call('POST', `/api/streams/${id}/events`, {
      expectedVersion: 'no_stream',
      events: [event(1), event(2), event(3)],
    });
    expect(
      (await call('DELETE', `/api/streams/${id}`, undefined, { 'if-match': '"3"' })).status,
    ).toBe(204);
    // Then reading it is 404 stream_deleted with the last version
    const read = await call('GET', `/api/streams/${id}`);
    expect(read.status).toBe(404);
    expect(read.body).toMatchObject({ code: 'stream_deleted', lastVersion: 3 });
    // And $all yields every index after the head, the three events as tombstones, then the marker
    const page = await call('GET', `/api/events?fromIndex=${head0 + 1}&limit=100`);
    const ids = page.body.messages.map((m: { id: number }) => m.id);
    expect(ids).toEqual([head0 + 1, head0 + 2, head0 + 3, head0 + 4]);
    expect(page.body.messages.slice(0, 3)).toEqual(
      [1, 2, 3].map((v, i) => ({
        id: head0 + 1 + i,
        messageType: 'ItemAdded',
        createdAt: expect.any(String),
        streamId: id,
        streamVersion: v,
        correlationId: expect.any(String),
        causationId: expect.any(String),
        tombstone: { reason: 'deleted' },
      })),
    );
    expect(page.body.messages[3]).toMatchObject({
      messageType: '$stream-deleted',
      body: { streamId: id, mode: 'soft', lastVersion: 3 },
    });
    // And one message by index is its tombstone too
    expect((await call('GET', `/api/events/${head0 + 2}`)).body.tombstone).toEqual({
      reason: 'deleted',
    });
    // And ?tombstones=skip leaves them out
    const skipped = await call(
      'GET',
      `/api/events?fromIndex=${head0 + 1}&limit=100&tombstones=skip`,
    );
    expect(skipped.body.messages.map((m: { id: number }) => m.id)).toEqual([head0 + 4]);
    // When a multi-event no_stream append re-creates it
    const again = await call('POST', `/api/streams/${id}/events`, {
      expectedVersion: 'no_stream',
      events: [event(4), event(5)],
    });
    // Then it lands at lastVersion + 1, and a second no_stream is a conflict
    expect(again.body).toMatchObject({ version: 5 });
    const second = await call('POST', `/api/streams/${id}/events`, {
      expectedVersion: 'no_stream',
      events: [event(6)],
    });
    expect(second.status).toBe(409);
    expect(second.headers.get('ordinal-current-version')).toBe('5');
    // And a read gets only the new versions, saying what is hidden
    const now = await call('GET', `/api/streams/${id}`);
    expect(now.body).toMatchObject({
      version: 5,
      count: 2,
      hidden: { beforeVersion: 4, reason: 'deleted' },
    });
    expect(now.body.events.map((e: { version: number }) => e.version)).toEqual([4, 5]);
  });

  it('a tombstoned stream answers 410 to every read, append, snapshot and metadata call', async () => {
    // Given a tombstoned stream with a snapshot taken before
    const id = await streamIn('live');
    expect(
      (await call('PUT', `/api/streams/${id}/snapshot`, { version: 2, state: { n: 2 } })).status,
    ).toBe(201);
    expect((await call('DELETE', `/api/streams/${id}?mode=tombstone`)).status).toBe(204);
    // Then every call on it is 410 stream_tombstoned
    const calls = await Promise.all([
      call('GET', `/api/streams/${id}`),
      call('GET', `/api/streams/${id}/version`),
      call('GET', `/api/streams/${id}/snapshot`),
      call('PUT', `/api/streams/${id}/snapshot`, { version: 1, state: {} }),
      call('GET', `/api/streams/${id}/metadata`),
      call('PUT', `/api/streams/${id}/metadata`, { maxCount: 1 }),
      call('POST', `/api/streams/${id}/events`, { expectedVersion: 'any', events: [event(1)] }),
      call('DELETE', `/api/streams/${id}`),
    ]);
    for (const res of calls)
      expect([res.status, res.body.code]).toEqual([410, 'stream_tombstoned']);
    // And its snapshots are gone
    expect(await db.query('SELECT * FROM snapshots WHERE stream_id = $1', [id])).toEqual([]);
  });

  it('deletes with an expected version: a wrong one is 409, a stream with no events 404', async () => {
    const id = await streamIn('live');
    const wrong = await call('DELETE', `/api/streams/${id}?expectedVersion=1`);
    expect(wrong.status).toBe(409);
    expect(wrong.headers.get('ordinal-current-version')).toBe('2');
    expect((await call('DELETE', `/api/streams/nothing-here`)).body.code).toBe('stream_not_found');
    expect((await call('DELETE', `/api/streams/${id}?expectedVersion=2`)).status).toBe(204);
    // A second soft delete changes nothing
    expect((await call('DELETE', `/api/streams/${id}`)).status).toBe(204);
    const markers = await db.query(
      `SELECT body FROM messages WHERE message_type = '$stream-deleted' AND body->>'streamId' = $1`,
      [id],
    );
    expect(markers).toEqual([{ body: { streamId: id, mode: 'soft', lastVersion: 2 } }]);
  });
});
