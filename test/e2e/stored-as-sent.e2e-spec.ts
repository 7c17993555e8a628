import { createHash } from 'node:crypto';
import { OrdinalClient } from '@ordinal/client';
import { request } from 'node:http';
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  DEV_AUTH,
  startServer,
  waitFor,
  type HttpResponse,
  type TestServer,
} from '../support/test-server.js';
import { checkedHttp } from '../support/conformance.js';
import { SseConnection, type SseEvent } from '../support/sse-connection.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  brokerUrl,
  collect,
  connectTestBroker,
  uniqueName,
  type Collector,
  type TestBroker,
} from '../support/amqp-broker.js';

/** RFC 8785 (JCS), written here independently of the server: what a client would do. */
const jcs = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(jcs).join(',')}]`
    : v !== null && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON text any producer may send: deep, unicode, odd and duplicate keys, big and small numbers. */
const noNul = (t: string) => !t.includes('\u0000');
const oddKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '10',
    '9',
    '0',
    '',
    'a',
    'é',
    '😀',
    'Ω',
    'aa',
    'ab',
  ),
  fc.string({ unit: 'grapheme', maxLength: 6 }).filter(noNul),
);
const number = fc.oneof(
  fc.integer(),
  fc.constantFrom(
    0,
    -0,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    0.1,
    1.5e-7,
    5e-324,
    2.2250738585072014e-308,
    -1234.5678,
    1e20,
    6.02e23,
    1.5e300,
    -Number.MAX_VALUE,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const scalar = fc.oneof(
  fc
    .string({ unit: 'grapheme', maxLength: 8 })
    .filter(noNul)
    .map((t) => JSON.stringify(t)),
  number.map((n) => JSON.stringify(n)),
  fc.constantFrom('true', 'false', 'null'),
);
const { object: jsonObject, array: jsonArray } = fc.letrec<{
  json: string;
  array: string;
  object: string;
}>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('json'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(oddKey, tie('json')), { maxLength: 6 })
    .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
}));
const content = fc.oneof({ weight: 4, arbitrary: jsonObject }, { weight: 1, arbitrary: jsonArray });

describe('stored as sent (H2): every reader gives a message back exactly as it was published', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let server: TestServer;
  const inputQueue = uniqueName('stored-as-sent');
  const realtime = uniqueName('sas-realtime');
  let sink: Collector;
  const send = (method: string, path: string, body?: unknown) =>
    checkedHttp(server.baseUrl, method, path, body);

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    const file = join(mkdtempSync(join(tmpdir(), 'ordinal-interfaces-')), 'interfaces.yaml');
    writeFileSync(
      file,
      `interfaces:\n  - name: ${realtime}\n    type: realtime\n    includeTypes: [RoundTrip, RoundTripAmqp]\n`,
    );
    server = await startServer(db.url, {
      ORDINAL_DUPLICATE_WINDOW: '0',
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: inputQueue,
      ORDINAL_INTERFACES: file,
    });
    await waitFor(
      async () => (await broker.consumers(inputQueue)) === 1,
      10_000,
      'the input consumer',
    );
    sink = await collect(broker, `${realtime}.sink`);
  });
  afterAll(async () => {
    await sink?.stop();
    await server?.close();
    await broker?.deleteQueues(inputQueue, `${inputQueue}.rejected`, `${realtime}.sink`);
    await broker?.close();
    await db?.drop();
  });

  describe('numbers JavaScript cannot keep are refused with 400 naming the path, on every route', () => {
    const numbers = [
      '9007199254740993',
      '1e400',
      '-1e400',
      '1.00000000000000000001',
      '1e-400',
      '12345678901234567890',
    ];
    const routes: [string, string, (n: string) => string, RegExp][] = [
      [
        'PUT',
        '/api/events/message',
        (n) => `{"messageType":"N","content":{"a":[1,{"n":${n}}]}}`,
        /^content\.a\.1\.n /,
      ],
      [
        'PUT',
        '/api/events/message',
        (n) => `{"messageType":"N","content":{},"metadata":{"m":${n}}}`,
        /^metadata\.m /,
      ],
      [
        'POST',
        '/api/events/messages',
        (n) =>
          `{"messages":[{"messageType":"N","content":{}},{"messageType":"N","content":{"x":${n}}}]}`,
        /^messages\.1\.content\.x /,
      ],
      [
        'POST',
        '/api/streams/n-1/events',
        (n) => `{"expectedVersion":"any","events":[{"eventType":"N","data":{"d":${n}}}]}`,
        /^events\.0\.data\.d /,
      ],
      ['PUT', '/api/streams/n-1/snapshot', (n) => `{"version":1,"state":{"s":${n}}}`, /^state\.s /],
    ];
    it.each(routes)('%s %s', async (method, path, body, where) => {
      for (const n of numbers) {
        const res = await send(method, path, body(n));
        expect([n, res.status]).toEqual([n, 400]);
        expect(res.body).toMatchObject({
          statusCode: 400,
          code: 'invalid_message',
          message: expect.stringMatching(where),
        });
      }
    });

    it('keeps every number that reads back as written, and every reader gives it back the same', async () => {
      // Given numbers whose text JavaScript reads as the value it means, however large: doubles
      // beyond 2^53 included (PostgreSQL's jsonb renders `1e20` as 100000000000000000000)
      const numbers =
        '[0.1,-0,1.5e-7,1E+2,9007199254740991,9007199254740992,-2.5e-300,0.30000000000000004,' +
        '1e20,6.02e23,1.5e300,-1.7976931348623157e308,5e-324]';
      const expected = [
        0.1, 0, 1.5e-7, 100, 9007199254740991, 9007199254740992, -2.5e-300, 0.30000000000000004,
        1e20, 6.02e23, 1.5e300, -1.7976931348623157e308, 5e-324,
      ];
      const live = await SseConnection.open(
        server.baseUrl,
        `/api/events/stream?startIndex=${(await send('GET', '/api/events/head')).body.head + 1}`,
        DEV_AUTH,
      );
      try {
        // When they are published
        const res = await send(
          'PUT',
          '/api/events/message',
          `{"messageType":"N","content":{"n":${numbers}}}`,
        );
        expect(res.status).toBe(201);
        const id: number = res.body.id;
        // Then GET, the page, a replayed and a live SSE stream and the client read the same values
        const read = await send('GET', `/api/events/${id}`);
        expect(read.body.body.n).toEqual(expected);
        const text = JSON.stringify(read.body);
        expect(JSON.stringify(res.body)).toBe(text);
        const page = await send('GET', `/api/events?fromIndex=${id}&limit=1`);
        expect(JSON.stringify(page.body.messages[0])).toBe(text);
        const replay = await SseConnection.open(
          server.baseUrl,
          `/api/events/stream?startIndex=${id}&endIndex=${id}`,
          DEV_AUTH,
        );
        await replay.waitFor(() => replay.ended, 10_000, 'the replay');
        await live.waitFor(() => live.indices().includes(id), 10_000, 'the live copy');
        for (const stream of [replay, live]) {
          const event = stream.events.find(
            (e) => e.event === 'message' && e.data.message.id === id,
          );
          expect(JSON.stringify(event?.data.message)).toBe(text);
        }
        const client = new OrdinalClient({ baseUrl: server.baseUrl, token: 'dev-ordinal-token' });
        expect(JSON.stringify(await client.get(id))).toBe(text);
        // And the content hash recomputes from what was read
        expect(read.body.contentHash).toBe(sha256(jcs(read.body.body)));
      } finally {
        live.close();
      }
    });
  });

  it('refuses a body that is not UTF-8 instead of replacing the bytes', async () => {
    const body = Buffer.concat([
      Buffer.from('{"messageType":"U","content":{"s":"'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}}'),
    ]);
    const res = await new Promise<Pick<HttpResponse, 'status' | 'body'>>((resolve, reject) => {
      const url = new URL('/api/events/message', server.baseUrl);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'PUT',
          headers: {
            ...DEV_AUTH,
            'content-type': 'application/json',
            'content-length': body.length,
          },
        },
        (r) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'invalid_utf8',
      message: expect.stringMatching(/UTF-8/),
    });
    expect(await db.query('SELECT 1 FROM messages WHERE message_type = $1', ['U'])).toHaveLength(0);
  });

  it('round trip: random JSON published by REST and AMQP reads back identical by GET, the page, live SSE, replay and a push interface; contentHash recomputes (property)', async () => {
    // Given a live stream open from the next index
    const head: number = (await send('GET', '/api/events/head')).body.head;
    const live = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=${head + 1}`,
      DEV_AUTH,
    );
    const published: number[] = [];
    try {
      await fc.assert(
        fc.asyncProperty(content, async (text) => {
          // When the value is published over REST
          const created = await send(
            'PUT',
            '/api/events/message',
            `{"messageType":"RoundTrip","content":${text}}`,
          );
          expect(created.status).toBe(201);
          published.push(created.body.id);
          // Then GET gives the same value, and byte for byte the same message the 201 gave (the live copy)
          const read = await send('GET', `/api/events/${created.body.id}`);
          expect(read.body.body).toEqual(JSON.parse(text));
          expect(JSON.stringify(read.body)).toBe(JSON.stringify(created.body));
          // And the content hash is RFC 8785's canonical form of what was read
          expect(read.body.contentHash).toBe(sha256(jcs(read.body.body)));
          // And the same content over AMQP is stored the same
          await broker.publish(inputQueue, Buffer.from(text), { messageType: 'RoundTripAmqp' });
          const [row] = await waitFor(
            async () => {
              const rows = await db.query<{ index: string }>(
                'SELECT index FROM messages WHERE message_type = $1 ORDER BY index DESC LIMIT 1',
                ['RoundTripAmqp'],
              );
              return rows.length === 1 && Number(rows[0].index) > created.body.id ? rows : null;
            },
            10_000,
            'the AMQP copy',
          );
          published.push(Number(row.index));
          const viaAmqp = await send('GET', `/api/events/${row.index}`);
          expect(JSON.stringify(viaAmqp.body.body)).toBe(JSON.stringify(read.body.body));
          expect(viaAmqp.body.contentHash).toBe(read.body.contentHash);
        }),
        { numRuns: 25 },
      );
      // Then the live stream, a replay and the page give every message as GET does, byte for byte
      const last = published[published.length - 1];
      await live.waitFor(() => live.indices().includes(last), 10_000, 'the live copies');
      const replay = await SseConnection.open(
        server.baseUrl,
        `/api/events/stream?startIndex=${head + 1}&endIndex=${last}`,
        DEV_AUTH,
      );
      await replay.waitFor(
        () => replay.events.some((e) => e.event === 'stream-ended'),
        10_000,
        'the replay',
      );
      const page = await send('GET', `/api/events?fromIndex=${head + 1}&limit=1000`);
      const text = (events: SseEvent[]) =>
        new Map(
          events
            .filter((e) => e.event === 'message')
            .map((e) => [e.data.message.id as number, JSON.stringify(e.data.message)]),
        );
      const liveText = text(live.events);
      const replayText = text(replay.events);
      const pageText = new Map(
        (page.body.messages as { id: number }[]).map((m) => [m.id, JSON.stringify(m)]),
      );
      // And a push interface delivers each body as those readers give it
      await waitFor(
        () => sink.messages.some((m) => m.properties.messageId === String(last)),
        10_000,
        'the interface deliveries',
      );
      const delivered = new Map(
        sink.messages.map((m) => [Number(m.properties.messageId), m.content.toString('utf8')]),
      );
      for (const id of published) {
        const read = (await send('GET', `/api/events/${id}`)).body;
        const got = JSON.stringify(read);
        expect([id, liveText.get(id)]).toEqual([id, got]);
        expect([id, replayText.get(id)]).toEqual([id, got]);
        expect([id, pageText.get(id)]).toEqual([id, got]);
        expect([id, delivered.get(id)]).toEqual([id, JSON.stringify(read.body)]);
      }
    } finally {
      live.close();
    }
  });
});
