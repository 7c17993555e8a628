import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { assertConforms, checkedHttp } from '../support/conformance.js';
import { JSON_LIMITS } from '@ordinal/pg';

/** JSON nested `depth` levels deep (the outer array counting as 1). */
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('the HTTP contract: no 5xx on valid or odd input (H1, G6)', () => {
  let db: TestDatabase;
  let server: TestServer;
  const send = (method: string, path: string, body?: unknown) =>
    checkedHttp(server.baseUrl, method, path, body);

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, { ORDINAL_DUPLICATE_WINDOW: '0' });
  });
  afterAll(async () => {
    await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await server?.close();
    await db?.drop();
  });

  it('checks every answer of this suite against the OpenAPI document (the check itself refuses what it must)', async () => {
    const headers = new Headers();
    await expect(
      assertConforms(server.baseUrl, 'GET', '/api/events/head', { status: 418, body: {}, headers }),
    ).rejects.toThrow(/status not in the OpenAPI document/);
    await expect(
      assertConforms(server.baseUrl, 'GET', '/api/events/head', {
        status: 200,
        body: { head: 'x' },
        headers,
      }),
    ).rejects.toThrow(/does not match/);
    await expect(
      assertConforms(server.baseUrl, 'GET', '/api/events/7', {
        status: 404,
        body: { statusCode: 404 },
        headers,
      }),
    ).rejects.toThrow(/does not match/);
    await expect(
      assertConforms(server.baseUrl, 'GET', '/api/events/head', {
        status: 200,
        body: { head: 3 },
        headers,
      }),
    ).resolves.toBeUndefined();
  });

  describe('constructor and __proto__ are ordinary keys of content, data and metadata', () => {
    const odd =
      '{"constructor":{"prototype":{"x":1}},"__proto__":{"polluted":true},"nested":[{"constructor":"c","__proto__":null}]}';
    const expected = JSON.parse(odd);

    it.each([
      [
        'PUT /api/events/message',
        'PUT',
        '/api/events/message',
        `{"messageType":"Odd","content":${odd},"metadata":${odd}}`,
      ],
      [
        'POST /api/events/messages',
        'POST',
        '/api/events/messages',
        `{"messages":[{"messageType":"Odd","content":${odd},"metadata":${odd}}]}`,
      ],
    ])('%s stores them and every reader gives them back', async (_name, method, path, body) => {
      // When content and metadata with those keys are published
      const res = await send(method, path, body);
      // Then they are stored, as sent
      expect(res.status).toBe(201);
      const id = res.body.id ?? res.body.messages[0].id;
      const read = await send('GET', `/api/events/${id}`);
      expect(read.body.body).toEqual(expected);
      expect(read.body.metadata).toEqual(expected);
      expect(Object.keys(read.body.body)).toContain('__proto__');
      // And nothing was polluted
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('POST /api/streams/:id/events and PUT …/snapshot store them too', async () => {
      const append = await send(
        'POST',
        '/api/streams/odd-1/events',
        `{"expectedVersion":0,"events":[{"eventType":"Odd","data":${odd},"metadata":${odd}}]}`,
      );
      expect(append.status).toBe(201);
      const snapshot = await send(
        'PUT',
        '/api/streams/odd-1/snapshot',
        `{"version":1,"state":${odd}}`,
      );
      expect(snapshot.status).toBe(201);
      const read = await send('GET', '/api/streams/odd-1?snapshot=false');
      expect(read.body.events[0].data).toEqual(expected);
      expect((await send('GET', '/api/streams/odd-1/snapshot')).body.snapshot.state).toEqual(
        expected,
      );
    });

    it('refuses them as top-level fields of a request, naming them', async () => {
      const res = await send(
        'PUT',
        '/api/events/message',
        '{"messageType":"A","content":{},"__proto__":{"messageType":"x"}}',
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/__proto__: not a field/);
    });
  });

  describe('an unpaired surrogate is refused with 400 naming its path, on every route', () => {
    it.each([
      [
        'message content',
        'PUT',
        '/api/events/message',
        { messageType: 'A', content: { a: ['x', 'b\ud800'] } },
        /content\.a\.1 has/,
      ],
      [
        'message metadata',
        'PUT',
        '/api/events/message',
        { messageType: 'A', content: {}, metadata: { m: '\udc00' } },
        /metadata\.m has/,
      ],
      [
        'a key',
        'PUT',
        '/api/events/message',
        { messageType: 'A', content: { ['k\ud800']: 1 } },
        /content\[.*\] \(this key\)/,
      ],
      [
        'batch content',
        'POST',
        '/api/events/messages',
        {
          messages: [
            { messageType: 'A', content: {} },
            { messageType: 'B', content: { s: '\ud800' } },
          ],
        },
        /messages\.1: .*content\.s has/,
      ],
      [
        'stream event data',
        'POST',
        '/api/streams/s-sur/events',
        {
          expectedVersion: 'any',
          events: [
            { eventType: 'A', data: {} },
            { eventType: 'A', data: { d: '\ud800' } },
          ],
        },
        /events\.1\.data\.d has/,
      ],
      [
        'stream event metadata',
        'POST',
        '/api/streams/s-sur/events',
        {
          expectedVersion: 'any',
          events: [{ eventType: 'A', data: {}, metadata: { d: '\ud800' } }],
        },
        /events\.0\.metadata\.d has/,
      ],
      [
        'snapshot state',
        'PUT',
        '/api/streams/s-sur/snapshot',
        { version: 1, state: { s: { t: '\ud800' } } },
        /state\.s\.t has/,
      ],
    ])('%s', async (_name, method, path, body, message) => {
      const res = await send(method, path, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        statusCode: 400,
        code: 'invalid_message',
        message: expect.stringMatching(message),
      });
    });
  });

  describe(`nesting deeper than ${JSON_LIMITS.maxDepth} levels is refused the same on every route`, () => {
    const routes: [string, string, string, (value: string) => string][] = [
      [
        'message content',
        'PUT',
        '/api/events/message',
        (v) => `{"messageType":"Deep","content":${v}}`,
      ],
      [
        'message metadata',
        'PUT',
        '/api/events/message',
        (v) => `{"messageType":"Deep","content":{},"metadata":{"m":${v}}}`,
      ],
      [
        'batch content',
        'POST',
        '/api/events/messages',
        (v) => `{"messages":[{"messageType":"Deep","content":${v}}]}`,
      ],
      [
        'stream event data',
        'POST',
        '/api/streams/deep-1/events',
        (v) => `{"expectedVersion":"any","events":[{"eventType":"Deep","data":${v}}]}`,
      ],
      [
        'snapshot state',
        'PUT',
        '/api/streams/deep-1/snapshot',
        (v) => `{"version":1,"state":${v}}`,
      ],
    ];

    it.each(routes)(
      '%s: far too deep and one too deep are 400s naming the limit',
      async (_name, method, path, body) => {
        for (const depth of [5000, JSON_LIMITS.maxDepth + 1]) {
          const res = await send(method, path, body(nested(depth)));
          expect(res.status).toBe(400);
          expect(res.body.message).toMatch(
            new RegExp(`nested deeper than ${JSON_LIMITS.maxDepth} levels`),
          );
        }
      },
    );

    it('accepts content at the limit and every reader gives it back', async () => {
      const res = await send(
        'PUT',
        '/api/events/message',
        `{"messageType":"Deep","content":${nested(JSON_LIMITS.maxDepth)}}`,
      );
      expect(res.status).toBe(201);
      const page = await send('GET', `/api/events?fromIndex=${res.body.id}&limit=1`);
      expect(page.status).toBe(200);
      expect(JSON.stringify(page.body.messages[0].body)).toBe(nested(JSON_LIMITS.maxDepth));
    });
  });

  it.each([
    ['/api/events?types=A&types=B', /types is given 2 times/],
    ['/api/events?fromIndex=1&fromIndex=2', /fromIndex is given 2 times/],
    ['/api/events/stream?startIndex=1&startIndex=2', /startIndex is given 2 times/],
    ['/api/events/stream?types=A&types=B', /types is given 2 times/],
    ['/api/streams/s-1?limit=1&limit=2', /limit is given 2 times/],
    ['/api/streams/s-1?snapshot=true&snapshot=false', /snapshot is given 2 times/],
    ['/api/projections?atLeast=1&atLeast=2', /atLeast is given 2 times/],
  ])('a repeated query parameter is a 400 naming it: %s', async (path, message) => {
    const res = await send('GET', path);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      code: 'repeated_parameter',
      parameter: expect.stringMatching(/^[a-zA-Z]+$/),
      message: expect.stringMatching(message),
    });
    expect(res.body.message).toMatch(new RegExp(`^${res.body.parameter} is given 2 times`));
  });

  it.each([
    ['GET', '/api/events?fromIndex=abc', 'fromIndex', "fromIndex must be an integer, got 'abc'"],
    ['GET', '/api/events?limit=0', 'limit', 'limit must be between 1 and 10000, got 0'],
    ['GET', '/api/events?types=A,bad%20type', 'types', /^types: 'bad type' is not a message type/],
    ['GET', '/api/events?tombstones=maybe', 'tombstones', /^tombstones must be include or skip/],
    ['GET', `/api/events?correlationId=${'c'.repeat(201)}`, 'correlationId', /^correlationId/],
    ['GET', '/api/events?shardIndex=1', 'shardCount', /go together/],
    ['GET', '/api/events?shardCount=2&shardIndex=2', 'shardIndex', /^shardIndex must be below/],
    ['GET', '/api/events/abc', 'index', "index must be an integer, got 'abc'"],
    ['GET', '/api/events/stream?startIndex=abc', 'startIndex', /^startIndex must be an integer/],
    ['GET', '/api/events/stream?startIndex=9&endIndex=8', 'endIndex', /^endIndex \(8\)/],
    ['GET', '/api/events/stream?types=A%27', 'types', /^types: /],
    ['GET', '/api/streams?limit=1001', 'limit', /^limit must be between/],
    ['GET', '/api/streams?prefix=a%20b', 'prefix', /^prefix 'a b' is invalid/],
    ['GET', '/api/streams/s-1?fromVersion=0', 'fromVersion', /^fromVersion must be between/],
    ['GET', '/api/streams/s-1?snapshot=maybe', 'snapshot', /^snapshot must be true or false/],
    ['DELETE', '/api/streams/s-1?mode=hard', 'mode', /^mode must be soft or tombstone/],
    ['DELETE', '/api/streams/s-1?expectedVersion=x', 'expectedVersion', /^expectedVersion must/],
    ['PUT', '/api/streams/order-%2A-x/metadata', 'streamId', /is neither a stream id/],
    ['GET', '/api/projections?atLeast=x', 'atLeast', /^atLeast must be an integer/],
    ['POST', '/api/projections/p/versions/0/promote', 'version', /^version must be between/],
    ['POST', '/api/projections/p/rebuild?mode=hard', 'mode', /^mode must be 'blue-green'/],
    ['GET', '/api/admin/scavenge?limit=101', 'limit', /^limit must be between 1 and 100/],
    ['POST', '/api/admin/scavenge?wait=maybe', 'wait', /^wait must be true or false/],
    ['GET', '/api/dead-letters?limit=x', 'limit', /^limit must be an integer/],
    ['GET', '/api/dashboard?since=x', 'since', /^since must be an integer/],
  ])(
    'a malformed or out-of-range parameter is a 400 invalid_parameter naming it: %s %s',
    async (method, path, parameter, message) => {
      const res = await send(method, path, method === 'PUT' ? {} : undefined);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: typeof message === 'string' ? message : expect.stringMatching(message),
        code: 'invalid_parameter',
        parameter,
      });
    },
  );

  it('keeps the specific code of a stream id parameter, and names the parameter', async () => {
    for (const [path, parameter] of [
      ['/api/streams/-bad', 'streamId'],
      ['/api/streams?after=-x', 'after'],
    ]) {
      const res = await send('GET', path);
      expect({ status: res.status, code: res.body.code, parameter: res.body.parameter }).toEqual({
        status: 400,
        code: 'invalid_stream_id',
        parameter,
      });
    }
  });

  // Last: the database is taken away from the server (and given back after).
  it('every read route and PUT …/snapshot answer 503 with Retry-After while the database refuses connections', async () => {
    // Given a stream with a version, and then a database that refuses connections (SQLSTATE 55000)
    expect(
      (
        await send('POST', '/api/streams/down-1/events', {
          expectedVersion: 0,
          events: [{ eventType: 'A', data: {} }],
        })
      ).status,
    ).toBe(201);
    await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await db.admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [db.name],
    );
    try {
      // When each route is called
      for (const [method, path, body] of [
        ['GET', '/api/events/head'],
        ['GET', '/api/events?fromIndex=1'],
        ['GET', '/api/events/1'],
        ['GET', '/api/events/stream?startIndex=1'],
        ['GET', '/api/streams/down-1'],
        ['GET', '/api/streams/down-1/version'],
        ['GET', '/api/streams/down-1/snapshot'],
        ['PUT', '/api/streams/down-1/snapshot', { version: 1, state: {} }],
        [
          'POST',
          '/api/streams/down-1/events',
          { expectedVersion: 1, events: [{ eventType: 'A', data: {} }] },
        ],
        ['PUT', '/api/events/message', { messageType: 'A', content: { down: true } }],
      ] as [string, string, unknown?][]) {
        const res = await checkedHttp(server.baseUrl, method, path, body, DEV_AUTH);
        // Then each is a JSON 503 with Retry-After
        expect([method, path, res.status]).toEqual([method, path, 503]);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(res.body).toMatchObject({ statusCode: 503, code: 'database_unavailable' });
      }
    } finally {
      await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    }
    await waitFor(
      async () => (await send('GET', '/api/events/head')).status === 200,
      10_000,
      'reads after the outage',
    );
  });
});
