import { OrdinalClient } from '@ordinal/client';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { assertConforms } from '../support/conformance.js';
import {
  DEV_AUTH,
  http,
  startServer,
  type HttpResponse,
  type TestServer,
} from '../support/test-server.js';

/** A header value as its UTF-8 bytes, one character per byte (what `fetch` puts on the wire). */
const utf8Bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

describe('text headers are UTF-8: a value means the same in a header and in the body', () => {
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

  const stored = (index: number) =>
    db
      .query<{
        idempotency_key: string | null;
        correlation_id: string;
      }>('SELECT idempotency_key, correlation_id FROM messages WHERE index = $1', [index])
      .then((rows) => rows[0]);
  /**
   * PUT /api/events/message through `fetch`, which writes each header character as one byte
   * (Node's http.request would encode the headers as UTF-8 when they share a write with the body).
   */
  const put = async (body: unknown, headers: Record<string, string>): Promise<HttpResponse> => {
    const response = await fetch(`${server.baseUrl}/api/events/message`, {
      method: 'PUT',
      headers: { ...DEV_AUTH, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const res: HttpResponse = {
      status: response.status,
      headers: response.headers,
      body: await response.json(),
    };
    await assertConforms(server.baseUrl, 'PUT', '/api/events/message', res);
    return res;
  };
  const count = async () =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM messages'))[0].n);

  it('reads a non-ASCII Idempotency-Key header as the same key the body names', async () => {
    // Given a message sent with `Idempotency-Key: clé-1` as UTF-8 bytes
    const message = { messageType: 'Keyed', content: { order: 'o-1' } };
    const first = await put(message, { 'idempotency-key': utf8Bytes('clé-1') });
    expect(first.status).toBe(201);
    expect(first.body.idempotencyKey).toBe('clé-1');
    expect((await stored(first.body.id)).idempotency_key).toBe('clé-1');
    // When the same message comes again with the key in the body
    const again = await http(server.baseUrl, 'PUT', '/api/events/message', {
      ...message,
      idempotencyKey: 'clé-1',
    });
    // Then it is a repeat of the first: one message stored, not two
    expect([again.status, again.body.id]).toEqual([200, first.body.id]);
  });

  it('reads a non-ASCII X-Correlation-Id header as UTF-8', async () => {
    const res = await put(
      { messageType: 'Correlated', content: { n: 1 } },
      { 'x-correlation-id': utf8Bytes('commande-é-日本') },
    );
    expect(res.status).toBe(201);
    expect(res.body.correlationId).toBe('commande-é-日本');
    expect((await stored(res.body.id)).correlation_id).toBe('commande-é-日本');
  });

  it('refuses a text header that is not UTF-8 with 400 invalid_utf8 naming it, storing nothing', async () => {
    const before = await count();
    for (const name of ['idempotency-key', 'x-correlation-id']) {
      // Latin-1 `é` (one byte, 0xE9) is not UTF-8
      const res = await put({ messageType: 'Latin1', content: { name } }, { [name]: 'cl\u00e9-2' });
      expect([name, res.status, res.body.code]).toEqual([name, 400, 'invalid_utf8']);
      expect(res.body.message.toLowerCase()).toContain(name);
    }
    expect(await count()).toBe(before);
  });

  it("sends the client's correlation id as UTF-8, whatever its characters", async () => {
    const client = new OrdinalClient({ baseUrl: server.baseUrl, token: 'dev-ordinal-token' });
    const result = await client.publish(
      { messageType: 'FromClient', content: { from: 'client' } },
      { correlationId: 'clé-日本' },
    );
    const message = result.status === 'created' ? result.message : null;
    expect(message?.correlationId).toBe('clé-日本');
    expect((await stored(message!.id)).correlation_id).toBe('clé-日本');
  });
});
