import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';

const READER = { authorization: 'Bearer read-secret' };

describe('GET /api/streams: the aggregate streams, a page at a time', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, { ORDINAL_TOKENS: 'reader:read-secret:read' });
    // Given five streams, one of them appended to twice, and one whose id has `_` where the others have `-`
    for (const id of ['card-1', 'book-3', 'book_1', 'book-2', 'book-10']) {
      const res = await http(server.baseUrl, 'POST', `/api/streams/${id}/events`, {
        expectedVersion: 0,
        events: [{ eventType: 'Created', data: { id } }],
      });
      expect(res.status).toBe(201);
    }
    await http(server.baseUrl, 'POST', '/api/streams/book-2/events', {
      expectedVersion: 1,
      events: [{ eventType: 'Lent', data: {} }],
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const list = (query: string) =>
    http(server.baseUrl, 'GET', `/api/streams${query}`, undefined, READER);
  const ids = (body: { streams: { streamId: string }[] }) => body.streams.map((s) => s.streamId);

  it('lists every stream in id order with its version and last append, with the read scope', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(
      res.body.streams.map((s: { streamId: string; version: number }) => [s.streamId, s.version]),
    ).toEqual([
      ['book-10', 1],
      ['book-2', 2],
      ['book-3', 1],
      ['book_1', 1],
      ['card-1', 1],
    ]);
    expect(Number.isNaN(Date.parse(res.body.streams[0].updatedAt))).toBe(false);
    expect(res.body.next).toBeUndefined();
    expect((await http(server.baseUrl, 'GET', '/api/streams', undefined, {})).status).toBe(401);
  });

  it('keeps the ids starting with a prefix (a `_` is a character, not a wildcard)', async () => {
    expect(ids((await list('?prefix=book-')).body)).toEqual(['book-10', 'book-2', 'book-3']);
    expect(ids((await list('?prefix=book_')).body)).toEqual(['book_1']);
    expect(ids((await list('?prefix=nothing')).body)).toEqual([]);
  });

  it('pages with limit, next and after, each stream once', async () => {
    const first = (await list('?limit=2')).body;
    expect([ids(first), first.next]).toEqual([['book-10', 'book-2'], 'book-2']);
    const second = (await list(`?limit=2&after=${first.next}`)).body;
    expect([ids(second), second.next]).toEqual([['book-3', 'book_1'], 'book_1']);
    const third = (await list(`?limit=2&after=${second.next}`)).body;
    expect([ids(third), third.next]).toEqual([['card-1'], undefined]);
    expect(ids((await list('?prefix=book-&after=book-2')).body)).toEqual(['book-3']);
  });

  it.each([
    ['?limit=0', /limit/],
    ['?limit=1001', /limit/],
    ['?prefix=a%20b', /prefix 'a b' is invalid/],
    ['?after=-x', /after '-x' is invalid/],
  ])('answers 400 naming the parameter for %s', async (query, message) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  it('answers an invalid stream id with the code invalid_stream_id on every route', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/streams/-bad', undefined],
      ['GET', '/api/streams/-bad/version', undefined],
      ['DELETE', '/api/streams/-bad', undefined],
      [
        'POST',
        '/api/streams/-bad/events',
        { expectedVersion: 'any', events: [{ eventType: 'E', data: {} }] },
      ],
      ['GET', '/api/streams?after=-x', undefined],
    ] as const) {
      const res = await http(server.baseUrl, method, path, body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({
        path,
        status: 400,
        code: 'invalid_stream_id',
      });
    }
  });
});
