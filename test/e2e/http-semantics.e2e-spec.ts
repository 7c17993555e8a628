import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { checkedHttp } from '../support/conformance.js';

describe('HTTP semantics: unknown fields, idempotency keys, methods, stream ends, slow bodies', () => {
  let db: TestDatabase;
  let server: TestServer;
  const send = (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = DEV_AUTH,
  ) => checkedHttp(server.baseUrl, method, path, body, headers);

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, { ORDINAL_BODY_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it.each([
    [
      'PUT',
      '/api/events/message',
      { messageType: 'A', content: {}, idempotency_key: 'k' },
      /^idempotency_key: not a field/,
    ],
    [
      'POST',
      '/api/events/messages',
      {
        messages: [
          { messageType: 'A', content: {} },
          { messageType: 'A', content: {}, usrId: 'u' },
        ],
      },
      /^messages\.1\.usrId: not a field/,
    ],
    [
      'POST',
      '/api/streams/u-1/events',
      { expectedVersion: 0, events: [{ evenType: 'A', data: {} }] },
      /events\.0\.evenType/,
    ],
    ['PUT', '/api/streams/u-1/snapshot', { version: 1, state: {}, stat: {} }, /^stat: not a field/],
  ])('an unknown field is a 400 naming it: %s %s', async (method, path, body, message) => {
    const res = await send(method, path, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      code: 'unknown_field',
      message: expect.stringMatching(message),
    });
    expect(await db.query("SELECT 1 FROM messages WHERE message_type = 'A'")).toHaveLength(0);
  });

  it.each([
    [
      'POST',
      '/api/events/messages',
      { messages: [{ messageType: 'A', content: {} }, []] },
      /^messages\.1: must be a JSON object/,
    ],
    [
      'POST',
      '/api/streams/u-2/events',
      { expectedVersion: 0, events: [[]] },
      /^events\.0: must be a JSON object/,
    ],
    [
      'POST',
      '/api/events/messages',
      { messages: [null, { messageType: 'A', content: {} }] },
      /^messages\.0: /,
    ],
    ['POST', '/api/streams/u-3/events', { expectedVersion: 0, events: [null] }, /^events\.0: /],
  ])(
    'null or an array where a message belongs is a 400 naming it (class-validator alone passed an array): %s %s',
    async (method, path, body, message) => {
      const res = await send(method, path, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, message: expect.stringMatching(message) });
      expect(await db.query("SELECT 1 FROM messages WHERE message_type = 'A'")).toHaveLength(0);
    },
  );

  describe('an Idempotency-Key reused with a different request is a 422, the same request a 200', () => {
    const keyed = (key: string) => ({ ...DEV_AUTH, 'idempotency-key': key });

    it('on PUT /api/events/message', async () => {
      // Given a message stored with a key
      const first = await send(
        'PUT',
        '/api/events/message',
        { messageType: 'Paid', userId: 'c-1', content: { n: 1, m: 2 }, metadata: { s: 'x' } },
        keyed('pay-1'),
      );
      expect(first.status).toBe(201);
      // When the same request comes again (keys in another order): the original, 200
      const same = await send(
        'PUT',
        '/api/events/message',
        { messageType: 'Paid', userId: 'c-1', content: { m: 2, n: 1 }, metadata: { s: 'x' } },
        keyed('pay-1'),
      );
      expect(same.status).toBe(200);
      expect(same.body).toEqual(first.body);
      // When the key comes with anything different: 422, naming the key and the original index
      for (const other of [
        { messageType: 'Paid', userId: 'c-1', content: { n: 2, m: 2 }, metadata: { s: 'x' } },
        { messageType: 'Refunded', userId: 'c-1', content: { n: 1, m: 2 }, metadata: { s: 'x' } },
        { messageType: 'Paid', userId: 'c-2', content: { n: 1, m: 2 }, metadata: { s: 'x' } },
        { messageType: 'Paid', userId: 'c-1', content: { n: 1, m: 2 } },
      ]) {
        const res = await send('PUT', '/api/events/message', other, keyed('pay-1'));
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({
          statusCode: 422,
          code: 'idempotency_key_reused',
          id: first.body.id,
          message: expect.stringMatching(/'pay-1'/),
        });
      }
      expect(
        await db.query('SELECT index FROM messages WHERE idempotency_key = $1', ['pay-1']),
      ).toHaveLength(1);
    });

    it('in a batch, per entry', async () => {
      const first = await send('POST', '/api/events/messages', {
        messages: [{ messageType: 'Paid', content: { n: 10 }, idempotencyKey: 'b-1' }],
      });
      expect(first.status).toBe(201);
      // Only a reused key: 422, the entry says so
      const reused = await send('POST', '/api/events/messages', {
        messages: [{ messageType: 'Paid', content: { n: 11 }, idempotencyKey: 'b-1' }],
      });
      expect(reused.status).toBe(422);
      expect(reused.body.messages[0]).toMatchObject({
        status: 'key_reused',
        code: 'idempotency_key_reused',
        id: first.body.messages[0].id,
      });
      // Beside a new message: 201, the new one stored, the reused entry marked
      const mixed = await send('POST', '/api/events/messages', {
        messages: [
          { messageType: 'Paid', content: { n: 12 } },
          { messageType: 'Paid', content: { n: 11 }, idempotencyKey: 'b-1' },
          { messageType: 'Paid', content: { n: 10 }, idempotencyKey: 'b-1' },
        ],
      });
      expect(mixed.status).toBe(201);
      expect(mixed.body.messages.map((m: { status: string }) => m.status)).toEqual([
        'created',
        'key_reused',
        'repeat',
      ]);
    });
  });

  it.each([
    ['DELETE', '/api/events/head', 'GET, HEAD'],
    ['POST', '/api/events/42', 'GET, HEAD'],
    // A path that is a route of its own is never taken for GET /api/events/:index
    ['DELETE', '/api/events/message', 'PUT'],
    ['GET', '/api/events/message', 'PUT'],
    ['PATCH', '/api/streams/s-1/snapshot', 'GET, HEAD, PUT'],
    ['PUT', '/api/events/messages', 'POST'],
    ['GET', '/api/events/stream-ticket', 'POST'],
    ['HEAD', '/api/events/stream-ticket', 'POST'],
  ])('a wrong method on a known route is a 405 with Allow: %s %s', async (method, path, allow) => {
    const res = await send(method, path, undefined);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    if (method !== 'HEAD')
      expect(res.body).toMatchObject({ statusCode: 405, code: 'method_not_allowed' });
  });

  it('an unknown route stays a 404', async () => {
    expect((await send('DELETE', '/api/nothing-here')).status).toBe(404);
  });

  describe('the stream and a standard EventSource', () => {
    /** The raw text of a stream's first bytes, up to the first blank line. */
    const firstBlock = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const url = new URL(path, server.baseUrl);
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(
            `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: x\r\n${Object.entries(headers)
              .map(([k, v]) => `${k}: ${v}\r\n`)
              .join('')}\r\n`,
          );
        });
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString();
          const head = text.indexOf('\r\n\r\n');
          const status = Number(text.slice(9, 12));
          if (status === 204 || (head >= 0 && text.indexOf('\n\n', head + 4) >= 0)) {
            socket.destroy();
            resolve({ status, text });
          }
        });
        socket.on('error', reject);
      });

    it('says X-Accel-Buffering: no on every stream, as docs/deployment.md says', async () => {
      // Given the deployment guide's advice on proxies
      const guide = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
      expect(guide).toContain('Ordinal sends `X-Accel-Buffering: no` on every stream');
      expect(guide).not.toMatch(/X-Accel-Buffering: no` is not sent/);
      // When a stream opens, Then its answer carries the header
      const { status, text } = await firstBlock('/api/events/stream?startIndex=1', DEV_AUTH);
      expect(status).toBe(200);
      expect(text).toMatch(/\r\nx-accel-buffering: no\r\n/i);
    });

    it('sends a retry: field with connected', async () => {
      const { status, text } = await firstBlock('/api/events/stream?startIndex=1', DEV_AUTH);
      expect(status).toBe(200);
      expect(text).toMatch(/event: connected\nretry: \d+\ndata: \{/);
    });

    it('gives stream-ended the id endIndex, so a reconnecting EventSource resumes past it even when nothing matched', async () => {
      const { text } = await new Promise<{ text: string }>((resolve, reject) => {
        const url = new URL(
          '/api/events/stream?startIndex=1&endIndex=1&types=NothingOfThisType',
          server.baseUrl,
        );
        const socket = connect(Number(url.port), url.hostname, () =>
          socket.write(
            `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: x\r\nAuthorization: ${DEV_AUTH.authorization}\r\n\r\n`,
          ),
        );
        let received = '';
        socket.on('data', (chunk) => {
          received += chunk.toString();
          if (received.includes('event: stream-ended')) {
            socket.destroy();
            resolve({ text: received });
          }
        });
        socket.on('error', reject);
      });
      expect(text).toMatch(/event: stream-ended\nid: 1\ndata: \{"endIndex":1,"lastIndex":null\}/);
    });

    it('answers 204 to a resumed request at or past endIndex, so an EventSource stops reconnecting', async () => {
      for (const lastEventId of ['3', '7']) {
        const { status } = await firstBlock('/api/events/stream?startIndex=1&endIndex=3', {
          ...DEV_AUTH,
          'Last-Event-ID': lastEventId,
        });
        expect(status).toBe(204);
      }
      const before = await firstBlock('/api/events/stream?startIndex=1&endIndex=3', {
        ...DEV_AUTH,
        'Last-Event-ID': '2',
      });
      expect(before.status).toBe(200);
    });
  });

  it('answers 408 and closes a request whose body drips in slower than the body timeout', async () => {
    // Given a request that announces 100 bytes and sends a few
    const url = new URL(server.baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    let closed = false;
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'PUT /api/events/message HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-ordinal-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"messageType"',
    );
    const started = Date.now();
    // Then within about the timeout the server answers 408 and closes the connection
    await waitFor(() => closed, 5000, 'the server to close the slow request');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toMatch(/"code":"body_timeout"/);
  });

  it('keeps a connection whose body came in a later read than its headers, and answers it', async () => {
    // Given a request whose body follows its headers in a second write (another read on the server)
    const url = new URL(server.baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    let closed = false;
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify({ messageType: 'Split', content: { part: 2 } });
    const head = (length: number) =>
      `PUT /api/events/message HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-ordinal-token\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    const started = Date.now();
    socket.write(head(Buffer.byteLength(body)));
    await waitFor(() => Date.now() - started >= 50, 1000, 'a later write');
    socket.write(body);
    await waitFor(() => answer.includes('"Split"'), 5000, 'the answer to the split request');
    expect(answer).toMatch(/^HTTP\/1\.1 201/);
    // When the body timeout (300 ms) has passed since that request began
    await waitFor(() => Date.now() - started > 600, 2000, 'the body timeout to pass');
    // Then its deadline did nothing: the connection is open and serves another request
    answer = '';
    const second = JSON.stringify({ messageType: 'SplitAgain', content: { part: 3 } });
    socket.write(head(Buffer.byteLength(second)) + second);
    await waitFor(() => answer.includes('"SplitAgain"'), 5000, 'the answer to the second request');
    expect(answer).toMatch(/^HTTP\/1\.1 201/);
    expect(answer).not.toMatch(/body_timeout/);
    expect(closed).toBe(false);
    socket.destroy();
  });
});
