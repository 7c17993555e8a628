import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  DEV_AUTH,
  http,
  startServer,
  type HttpResponse,
  type TestServer,
} from '../support/test-server.js';

describe('REST ingestion (I1-I3, I5, L6-L8)', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'reader:read-secret:read;writer:write-secret:write+read',
      ORDINAL_BODY_LIMIT: '16384',
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const order = {
    messageType: 'OrderPlaced',
    userId: 'customer-1',
    content: { orderId: 'o-1001', total: 49.9 },
  };

  it('stores the first message at index 2, after the StartMarker', async () => {
    // When the first message is published on a fresh log
    const res = await http(server.baseUrl, 'PUT', '/api/events/message', order);
    // Then it is the stored message, its id the global index
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: 2,
      messageType: 'OrderPlaced',
      userId: 'customer-1',
      body: { orderId: 'o-1001', total: 49.9 },
      metadata: null,
    });
    expect(res.body.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(res.body.createdAt))).toBe(false);
    const [marker] = await db.query<{ index: string; message_type: string; user_id: string }>(
      'SELECT index, message_type, user_id FROM messages WHERE index = 1',
    );
    expect(marker).toMatchObject({ message_type: 'StartMarker', user_id: 'system' });
  });

  it('answers 202 for a repeat inside the duplicate window and stores nothing', async () => {
    const before = await db.query<{ n: string }>('SELECT count(*) AS n FROM messages');
    const res = await http(server.baseUrl, 'PUT', '/api/events/message', order);
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('duplicate');
    const after = await db.query<{ n: string }>('SELECT count(*) AS n FROM messages');
    expect(after[0].n).toBe(before[0].n);
  });

  it('answers 200 with the original message for an idempotency-key repeat, header or field', async () => {
    const first = await http(
      server.baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'Paid', content: { n: 1 } },
      { authorization: 'Bearer dev-ordinal-token', 'idempotency-key': 'pay-1' },
    );
    expect(first.status).toBe(201);
    // The same request again, by field this time: the original comes back, nothing new is stored (a different body is a 422: http-contract.e2e-spec.ts)
    const again = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Paid',
      content: { n: 1 },
      idempotencyKey: 'pay-1',
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const rows = await db.query('SELECT index FROM messages WHERE idempotency_key = $1', ['pay-1']);
    expect(rows).toHaveLength(1);
  });

  it('stores a batch atomically with contiguous indices', async () => {
    const messages = Array.from({ length: 50 }, (_, i) => ({
      messageType: 'Line',
      userId: `u-${i % 3}`,
      content: { i },
    }));
    const res = await http(server.baseUrl, 'POST', '/api/events/messages', { messages });
    expect(res.status).toBe(201);
    const ids = res.body.messages.map((m: { id: number }) => m.id);
    expect(ids).toHaveLength(50);
    ids.forEach((id: number, k: number) => expect(id).toBe(ids[0] + k));
    const stored = await db.query<{ index: string }>(
      'SELECT index FROM messages WHERE message_type = $1 ORDER BY index',
      ['Line'],
    );
    expect(stored.map((r) => Number(r.index))).toEqual(ids);
  });

  it('rejects a batch with one bad message as a whole, naming the field', async () => {
    const res = await http(server.baseUrl, 'POST', '/api/events/messages', {
      messages: [
        { messageType: 'Ok', content: {} },
        { messageType: 'bad type', content: {} },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('messages.1.messageType');
    expect(await db.query('SELECT 1 FROM messages WHERE message_type = $1', ['Ok'])).toHaveLength(
      0,
    );
  });

  describe('bad input gets a JSON error naming the problem', () => {
    const cases: [string, () => Promise<HttpResponse>, number, RegExp][] = [
      [
        'malformed JSON',
        () => http(server.baseUrl, 'PUT', '/api/events/message', '{"messageType":'),
        400,
        /JSON/,
      ],
      [
        'missing messageType',
        () => http(server.baseUrl, 'PUT', '/api/events/message', { content: {} }),
        400,
        /messageType/,
      ],
      [
        'messageType with a space',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', { messageType: 'a b', content: {} }),
        400,
        /messageType/,
      ],
      [
        'messageType of 201 characters',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', {
            messageType: 'x'.repeat(201),
            content: {},
          }),
        400,
        /messageType/,
      ],
      [
        'content a string',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', { messageType: 'A', content: 'text' }),
        400,
        /content/,
      ],
      [
        'content missing',
        () => http(server.baseUrl, 'PUT', '/api/events/message', { messageType: 'A' }),
        400,
        /content/,
      ],
      [
        'content with a NUL character',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', {
            messageType: 'A',
            content: { s: 'a\u0000b' },
          }),
        400,
        /content/,
      ],
      [
        'metadata with a NUL character',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', {
            messageType: 'A',
            content: {},
            metadata: { s: '\u0000' },
          }),
        400,
        /metadata/,
      ],
      [
        'metadata an array',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', {
            messageType: 'A',
            content: {},
            metadata: [1],
          }),
        400,
        /metadata/,
      ],
      [
        'empty batch',
        () => http(server.baseUrl, 'POST', '/api/events/messages', { messages: [] }),
        400,
        /messages/,
      ],
      [
        'a NUL character in a batch, naming the message',
        () =>
          http(server.baseUrl, 'POST', '/api/events/messages', {
            messages: [
              { messageType: 'A', content: {} },
              { messageType: 'B', content: { s: '\u0000' } },
            ],
          }),
        400,
        /messages\.1: .*NUL/,
      ],
      [
        'an unpaired surrogate in userId',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', {
            messageType: 'A',
            userId: 'x\ud800',
            content: {},
          }),
        400,
        /userId/,
      ],
      // An own `constructor` would hide the DTO's rules from class-validator: refused, not waved through
      [
        'a constructor field',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', {
            constructor: 1,
            messageType: 'a b',
            content: 'x',
          }),
        400,
        /constructor/,
      ],
      [
        'a form body',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', 'a=b', {
            ...DEV_AUTH,
            'content-type': 'application/x-www-form-urlencoded',
          }),
        415,
        /application\/json/,
      ],
      [
        'a text/plain body, even of JSON',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', JSON.stringify(order), {
            ...DEV_AUTH,
            'content-type': 'text/plain',
          }),
        415,
        /application\/json/,
      ],
      [
        'no token',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', { messageType: 'A', content: {} }, {}),
        401,
        /bearer/i,
      ],
      [
        'wrong token',
        () =>
          http(
            server.baseUrl,
            'PUT',
            '/api/events/message',
            { messageType: 'A', content: {} },
            { authorization: 'Bearer nope' },
          ),
        401,
        /token/i,
      ],
      [
        'read-only token writing',
        () =>
          http(
            server.baseUrl,
            'PUT',
            '/api/events/message',
            { messageType: 'A', content: {} },
            { authorization: 'Bearer read-secret' },
          ),
        403,
        /write/,
      ],
      [
        'body over the limit',
        () =>
          http(server.baseUrl, 'PUT', '/api/events/message', {
            messageType: 'A',
            content: { s: 'x'.repeat(20_000) },
          }),
        413,
        /large/i,
      ],
    ];
    it.each(cases)('%s', async (_name, send, status, message) => {
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.body).toMatchObject({
        statusCode: status,
        error: expect.any(String),
        message: expect.stringMatching(message),
      });
    });
  });

  it('stores a literal backslash-u0000 text, which is not a NUL character', async () => {
    const res = await http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Escaped',
      content: { s: '\\u0000' },
    });
    expect(res.status).toBe(201);
    const [row] = await db.query<{ s: string }>(
      "SELECT body->>'s' AS s FROM messages WHERE index = $1",
      [res.body.id],
    );
    expect(row.s).toBe('\\u0000');
  });

  it('accepts a write-scoped token and reads with a read-scoped one', async () => {
    const w = await http(
      server.baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'Scoped', content: { k: 1 } },
      { authorization: 'Bearer write-secret' },
    );
    expect(w.status).toBe(201);
    const r = await http(server.baseUrl, 'GET', `/api/events/${w.body.id}`, undefined, {
      authorization: 'Bearer read-secret',
    });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(w.body.id);
  });

  it('serves health, metrics and the OpenAPI document without a token', async () => {
    const health = await http(server.baseUrl, 'GET', '/health', undefined, {});
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', database: 'up', startMarker: 1 });
    const metrics = await fetch(server.baseUrl + '/metrics');
    const text = await metrics.text();
    expect(text).toMatch(/ordinal_messages_ingested_total \d+/);
    expect(text).toContain('ordinal_flush_batch_messages_bucket');
    expect(text).toContain('ordinal_flush_duration_seconds_bucket');
    const docs = await http(server.baseUrl, 'GET', '/api/docs-json', undefined, {});
    expect(docs.status).toBe(200);
    expect(Object.keys(docs.body.paths)).toEqual(
      expect.arrayContaining(['/api/events/message', '/api/events/messages']),
    );
  });
});
