import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

const READER = { authorization: 'Bearer read-secret' };
const WRITER = { authorization: 'Bearer write-secret' };

describe('Aggregate streams over REST (A1, A3, A5)', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'reader:read-secret:read;writer:write-secret:write',
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    http(server.baseUrl, method, path, body, headers);
  const placed = { eventType: 'OrderCreated', data: { customer: 'alice', total: 49.98 } };

  it('appends to a new stream with expectedVersion 0 and answers versions and global indices', async () => {
    // When two events are appended to a stream that does not exist
    const res = await call('POST', '/api/streams/order-123/events', {
      expectedVersion: 0,
      events: [
        placed,
        {
          eventType: 'ItemAdded',
          schemaVersion: 2,
          data: { sku: 'GADGET-7', qty: 1 },
          metadata: { by: 'test' },
        },
      ],
    });
    // Then 201 with the new version and the contiguous indices they took
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      streamId: 'order-123',
      version: 2,
      firstIndex: expect.any(Number),
      lastIndex: expect.any(Number),
    });
    expect(res.body.lastIndex).toBe(res.body.firstIndex + 1);
    // And they are ordinary log messages at those indices
    const page = await call('GET', `/api/events?fromIndex=${res.body.firstIndex}&limit=2`);
    expect(
      page.body.messages.map((m: { id: number; messageType: string }) => [m.id, m.messageType]),
    ).toEqual([
      [res.body.firstIndex, 'OrderCreated'],
      [res.body.lastIndex, 'ItemAdded'],
    ]);
    expect(await call('GET', '/api/streams/order-123/version')).toMatchObject({
      status: 200,
      body: { version: 2 },
    });
  });

  it('delivers aggregate events on the SSE stream like any other message', async () => {
    // Given two events appended to a stream
    const res = await call('POST', '/api/streams/order-sse/events', {
      expectedVersion: 'no_stream',
      events: [placed, { eventType: 'OrderShipped', data: { at: 'now' } }],
    });
    // When a pull stream reads their index range
    const stream = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=${res.body.firstIndex}&endIndex=${res.body.lastIndex}`,
      DEV_AUTH,
    );
    try {
      await stream.waitFor(() => stream.ended, 5000, 'the end of the stream');
      // Then both arrive in index order
      expect(stream.indices()).toEqual([res.body.firstIndex, res.body.lastIndex]);
      expect(
        stream.events.filter((e) => e.event === 'message').map((e) => e.data.message.messageType),
      ).toEqual(['OrderCreated', 'OrderShipped']);
    } finally {
      stream.close();
    }
  });

  it('answers 409 with version_conflict, current and expected', async () => {
    // Given order-123 at version 2, When a client expects version 1
    const res = await call('POST', '/api/streams/order-123/events', {
      expectedVersion: 1,
      events: [placed],
    });
    // Then 409 names the conflict, and nothing was written
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      statusCode: 409,
      error: 'version_conflict',
      streamId: 'order-123',
      current: 2,
      expected: 1,
    });
    expect(typeof res.body.message).toBe('string');
    expect((await call('GET', '/api/streams/order-123/version')).body.version).toBe(2);
    // And "no_stream" on an existing stream conflicts too, "any" appends
    expect(
      (
        await call('POST', '/api/streams/order-123/events', {
          expectedVersion: 'no_stream',
          events: [placed],
        })
      ).body,
    ).toMatchObject({ error: 'version_conflict', expected: 'no_stream' });
    expect(
      await call('POST', '/api/streams/order-123/events', {
        expectedVersion: 'any',
        events: [placed],
      }),
    ).toMatchObject({ status: 201, body: { version: 3 } });
  });

  it('lets exactly one of 20 concurrent REST appends with one expected version win', async () => {
    await call('POST', '/api/streams/race-1/events', { expectedVersion: 0, events: [placed] });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', '/api/streams/race-1/events', {
          expectedVersion: 1,
          events: [{ eventType: 'Bid', data: { i } }],
        }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    expect((await call('GET', '/api/streams/race-1')).body.count).toBe(2);
  });

  it('reads a stream with its events, from a version, and the stored schema versions', async () => {
    const all = await call('GET', '/api/streams/order-123');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ streamId: 'order-123', version: 3, count: 3 });
    expect(all.body.snapshot).toBeUndefined();
    expect(all.body.events[1]).toEqual({
      version: 2,
      index: expect.any(Number),
      eventType: 'ItemAdded',
      schemaVersion: 2,
      data: { sku: 'GADGET-7', qty: 1 },
      metadata: { by: 'test' },
      createdAt: expect.any(String),
    });
    const tail = await call('GET', '/api/streams/order-123?fromVersion=2');
    expect(tail.body.events.map((e: { version: number }) => e.version)).toEqual([2, 3]);
    expect(tail.body.count).toBe(2);
    const missing = await call('GET', '/api/streams/order-999');
    expect(missing.body).toEqual({ streamId: 'order-999', version: 0, events: [], count: 0 });
    expect((await call('GET', '/api/streams/order-999/version')).body).toEqual({ version: 0 });
  });

  it('saves and reads snapshots; reads use the newest snapshot plus later events', async () => {
    // Given no snapshot yet
    expect((await call('GET', '/api/streams/order-123/snapshot')).body).toEqual({
      streamId: 'order-123',
      snapshot: null,
    });
    // When one is saved at version 2
    const saved = await call('PUT', '/api/streams/order-123/snapshot', {
      version: 2,
      state: { customer: 'alice', items: 1 },
    });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ streamId: 'order-123', version: 2 });
    expect((await call('GET', '/api/streams/order-123/snapshot')).body.snapshot).toMatchObject({
      version: 2,
      state: { customer: 'alice', items: 1 },
    });
    // Then a read returns it and only the events after it; count excludes the snapshot
    const read = await call('GET', '/api/streams/order-123');
    expect(read.body).toMatchObject({
      version: 3,
      snapshot: { version: 2, state: { customer: 'alice', items: 1 } },
      count: 1,
    });
    expect(read.body.events.map((e: { version: number }) => e.version)).toEqual([3]);
    // And snapshot=false reads plain events; a fromVersion past the snapshot ignores it
    const plain = await call('GET', '/api/streams/order-123?snapshot=false');
    expect(plain.body.snapshot).toBeUndefined();
    expect(plain.body.count).toBe(3);
    const past = await call('GET', '/api/streams/order-123?fromVersion=3');
    expect(past.body.snapshot).toBeUndefined();
    expect(past.body.events.map((e: { version: number }) => e.version)).toEqual([3]);
  });

  it('refuses a snapshot ahead of the stream with 409 snapshot_version_exceeds_stream', async () => {
    const res = await call('PUT', '/api/streams/order-123/snapshot', { version: 4, state: {} });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      statusCode: 409,
      error: 'snapshot_version_exceeds_stream',
      streamId: 'order-123',
      version: 4,
      current: 3,
    });
    expect(
      (await call('PUT', '/api/streams/order-new/snapshot', { version: 1, state: {} })).status,
    ).toBe(409);
  });

  describe('bad versions and stream ids are 400 with a JSON body naming the problem', () => {
    const long = 'x'.repeat(201);
    const cases: [string, string, string, unknown, RegExp][] = [
      [
        'expectedVersion negative',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: -1, events: [placed] },
        /expectedVersion/,
      ],
      [
        'expectedVersion fractional',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: 1.5, events: [placed] },
        /expectedVersion/,
      ],
      [
        'expectedVersion numeric string',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: '1', events: [placed] },
        /expectedVersion/,
      ],
      [
        'expectedVersion unknown word',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: 'latest', events: [placed] },
        /expectedVersion/,
      ],
      [
        'expectedVersion missing',
        'POST',
        '/api/streams/order-1/events',
        { events: [placed] },
        /expectedVersion/,
      ],
      [
        'no events',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: 0, events: [] },
        /events/,
      ],
      [
        'bad eventType',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: 0, events: [{ eventType: 'a b', data: {} }] },
        /events\.0\.eventType/,
      ],
      [
        'data a string',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: 0, events: [{ eventType: 'A', data: 'x' }] },
        /events\.0\.data/,
      ],
      [
        'schemaVersion 0',
        'POST',
        '/api/streams/order-1/events',
        { expectedVersion: 0, events: [{ eventType: 'A', schemaVersion: 0, data: {} }] },
        /schemaVersion/,
      ],
      [
        'stream id starting with -',
        'POST',
        '/api/streams/-order/events',
        { expectedVersion: 0, events: [placed] },
        /streamId/,
      ],
      ['stream id with a space', 'GET', '/api/streams/order%201', undefined, /streamId/],
      ['stream id of 201 characters', 'GET', `/api/streams/${long}/version`, undefined, /streamId/],
      [
        'stream id with a slash (encoded)',
        'PUT',
        '/api/streams/order%2F1/snapshot',
        { version: 1, state: {} },
        /streamId/,
      ],
      ['fromVersion 0', 'GET', '/api/streams/order-123?fromVersion=0', undefined, /fromVersion/],
      [
        'fromVersion negative',
        'GET',
        '/api/streams/order-123?fromVersion=-2',
        undefined,
        /fromVersion/,
      ],
      [
        'fromVersion non-numeric',
        'GET',
        '/api/streams/order-123?fromVersion=abc',
        undefined,
        /fromVersion/,
      ],
      [
        'fromVersion fractional',
        'GET',
        '/api/streams/order-123?fromVersion=1.5',
        undefined,
        /fromVersion/,
      ],
      [
        'snapshot flag not boolean',
        'GET',
        '/api/streams/order-123?snapshot=maybe',
        undefined,
        /snapshot/,
      ],
      [
        'snapshot version 0',
        'PUT',
        '/api/streams/order-123/snapshot',
        { version: 0, state: {} },
        /version/,
      ],
      [
        'snapshot version negative',
        'PUT',
        '/api/streams/order-123/snapshot',
        { version: -1, state: {} },
        /version/,
      ],
      [
        'snapshot version non-numeric',
        'PUT',
        '/api/streams/order-123/snapshot',
        { version: 'two', state: {} },
        /version/,
      ],
      ['snapshot without state', 'PUT', '/api/streams/order-123/snapshot', { version: 1 }, /state/],
    ];
    it.each(cases)('%s', async (_name, method, path, body, problem) => {
      const res = await call(method, path, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.body.message).toMatch(problem);
    });

    it.each([
      [
        'event data',
        'POST',
        '/api/streams/order-nul/events',
        { expectedVersion: 0, events: [{ eventType: 'A', data: { s: 'a\u0000b' } }] },
        '/api/streams/order-nul/version',
        { version: 0 },
      ],
      [
        'snapshot state',
        'PUT',
        '/api/streams/order-123/snapshot',
        { version: 3, state: { s: '\u0000' } },
        '/api/streams/order-123/snapshot',
        { streamId: 'order-123', snapshot: expect.objectContaining({ version: 2 }) },
      ],
    ])(
      'refuses a NUL character in %s with 400 invalid_message and stores nothing',
      async (_name, method, path, body, readBack, unchanged) => {
        const res = await call(method, path, body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({
          statusCode: 400,
          code: 'invalid_message',
          message: expect.stringMatching(/NUL/),
        });
        expect((await call('GET', readBack)).body).toEqual(unchanged);
      },
    );

    it('accepts a stream id of exactly 200 characters', async () => {
      const id = 'y'.repeat(200);
      expect(
        (await call('POST', `/api/streams/${id}/events`, { expectedVersion: 0, events: [placed] }))
          .status,
      ).toBe(201);
      expect((await call('GET', `/api/streams/${id}/version`)).body).toEqual({ version: 1 });
    });

    it('writes nothing for any of them', async () => {
      expect((await call('GET', '/api/streams/order-1/version')).body.version).toBe(0);
    });
  });

  describe('auth (I5)', () => {
    it('needs a token on every stream route', async () => {
      for (const [method, path] of [
        ['POST', '/api/streams/order-1/events'],
        ['GET', '/api/streams/order-1'],
        ['GET', '/api/streams/order-1/version'],
        ['PUT', '/api/streams/order-1/snapshot'],
        ['GET', '/api/streams/order-1/snapshot'],
      ]) {
        expect((await call(method, path, method === 'GET' ? undefined : {}, {})).status).toBe(401);
      }
    });

    it('needs the write scope to append or snapshot and the read scope to read', async () => {
      expect(
        (
          await call(
            'POST',
            '/api/streams/order-1/events',
            { expectedVersion: 0, events: [placed] },
            READER,
          )
        ).status,
      ).toBe(403);
      expect(
        (await call('PUT', '/api/streams/order-123/snapshot', { version: 1, state: {} }, READER))
          .status,
      ).toBe(403);
      expect((await call('GET', '/api/streams/order-123', undefined, WRITER)).status).toBe(403);
      expect((await call('GET', '/api/streams/order-123/version', undefined, READER)).status).toBe(
        200,
      );
      expect(
        (
          await call(
            'POST',
            '/api/streams/scoped-1/events',
            { expectedVersion: 0, events: [placed] },
            WRITER,
          )
        ).status,
      ).toBe(201);
    });
  });
});
