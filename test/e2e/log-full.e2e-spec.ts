import { NestFactory } from '@nestjs/core';
import { LogReader, OrdinalModule } from '@ordinal/nestjs';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

/** The last index every JSON reader reads exactly (2^53 − 1). */
const MAX = Number.MAX_SAFE_INTEGER;

const publish = (baseUrl: string, content: unknown, extra: Record<string, unknown> = {}) =>
  http(baseUrl, 'PUT', '/api/events/message', { messageType: 'NearTheTop', content, ...extra });

const publishBatch = (baseUrl: string, n: number) =>
  http(baseUrl, 'POST', '/api/events/messages', {
    messages: Array.from({ length: n }, (_, i) => ({ messageType: 'NearTheTop', content: { i } })),
  });

describe.each(['gapless', 'concurrent'] as const)(
  'a log that reaches 2^53 − 1 (%s mode)',
  (ordering) => {
    let db: TestDatabase;
    let server: TestServer;
    const env = {
      ORDINAL_ORDERING: ordering,
      ORDINAL_TOKENS: 'admin:admin-secret:admin+write+read',
    };

    beforeAll(async () => {
      // Given a log whose last message is at 2^53 − 3: the server migrates a fresh database,
      // stops, the test moves the head to 2^53 − 4, and the server starts again on it (its
      // start marker takes 2^53 − 3)
      db = await createTestDatabase();
      await (await startServer(db.url, env)).close();
      // A row by hand needs a segment (docs/storage.md): one from there to the last index.
      await db.query(
        `CREATE TABLE messages_edge (LIKE messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS)`,
      );
      await db.query(
        `ALTER TABLE messages ATTACH PARTITION messages_edge FOR VALUES FROM (${String(MAX - 3)}) TO (${String(MAX + 1)})`,
      );
      await db.query(
        `INSERT INTO log_segments (first_index, end_index, table_name) VALUES ($1, $2, 'messages_edge')`,
        [String(MAX - 3), String(MAX + 1)],
      );
      await db.query(
        `INSERT INTO messages (index, message_type, body, content_hash) VALUES ($1, 'Seed', '{}', 'seed')`,
        [String(MAX - 3)],
      );
      await db.query(`UPDATE log_head SET position = $1`, [String(MAX - 3)]);
      await db.query(`UPDATE log_watermark SET position = $1`, [String(MAX - 3)]);
      await db.query(`SELECT setval('messages_index_seq', $1)`, [String(MAX - 3)]);
      server = await startServer(db.url, env);
    });
    afterAll(async () => {
      await server?.close();
      await db?.drop();
    });

    const count = async () =>
      Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM messages'))[0].n);

    it('stores up to 2^53 − 1, then refuses every append with 507 log_full, storing nothing, and reads on', async () => {
      const before = await count();
      const start = await http(server.baseUrl, 'GET', '/api/events/head');
      expect(start.body.head).toBe(MAX - 2);
      if (ordering === 'gapless') {
        // When a batch needs three positions where two are left
        const over = await publishBatch(server.baseUrl, 3);
        // Then it is refused whole, and no position is used
        expect(over.status).toBe(507);
        expect(over.body.code).toBe('log_full');
        expect(await count()).toBe(before);
      }
      // When the last two positions are filled
      const keyed = await publish(server.baseUrl, { n: 1 }, { idempotencyKey: 'near-top-1' });
      const last = await publish(server.baseUrl, { n: 2 });
      expect([keyed.status, keyed.body.id]).toEqual([201, MAX - 1]);
      expect([last.status, last.body.id]).toEqual([201, MAX]);
      // Then a message, a batch, a stream append and an import are refused, nothing stored
      const one = await publish(server.baseUrl, { n: 3 });
      expect(one.status).toBe(507);
      expect(one.body).toMatchObject({ code: 'log_full' });
      expect(one.body.message).toContain('9007199254740991');
      expect((await publishBatch(server.baseUrl, 2)).status).toBe(507);
      const stream = await http(server.baseUrl, 'POST', '/api/streams/order-top/events', {
        expectedVersion: 'no_stream',
        events: [{ eventType: 'OrderOpened', data: {} }],
      });
      expect([stream.status, stream.body.code]).toEqual([507, 'log_full']);
      const imported = await fetch(`${server.baseUrl}/api/events/import`, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-secret', 'content-type': 'application/x-ndjson' },
        body: '{"messageType":"Imported","content":{"i":1}}\n',
      });
      expect(imported.status).toBe(507);
      expect(((await imported.json()) as { code: string }).code).toBe('log_full');
      expect(await count()).toBe(before + 2);
      // and a keyed message already stored still comes back as its original
      const repeat = await publish(server.baseUrl, { n: 1 }, { idempotencyKey: 'near-top-1' });
      expect([repeat.status, repeat.body.id]).toEqual([200, MAX - 1]);
      // and /health says so, without failing the check
      const health = await http(server.baseUrl, 'GET', '/health', undefined, {});
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'degraded', database: 'up', log: 'full' });
      // and every read still answers
      const head = await http(server.baseUrl, 'GET', '/api/events/head');
      expect([head.status, head.body.head]).toEqual([200, MAX]);
      const page = await http(server.baseUrl, 'GET', `/api/events?fromIndex=${MAX - 2}`);
      expect(page.status).toBe(200);
      expect(page.body.messages.map((m: { id: number }) => m.id)).toEqual([MAX - 2, MAX - 1, MAX]);
      const message = await http(server.baseUrl, 'GET', `/api/events/${MAX}`, undefined, DEV_AUTH);
      expect([message.status, message.body.id]).toEqual([200, MAX]);
      // and a reader that has everything continues after the last index, 2^53, and waits there:
      // the page's nextIndex is accepted as the next fromIndex, and as a stream's startIndex
      expect(page.body.nextIndex).toBe(MAX + 1);
      const after = await http(server.baseUrl, 'GET', `/api/events?fromIndex=${MAX + 1}`);
      expect([after.status, after.body.count, after.body.nextIndex]).toEqual([200, 0, MAX + 1]);
      const waiting = await SseConnection.open(
        server.baseUrl,
        `/api/events/stream?startIndex=${MAX + 1}`,
        DEV_AUTH,
      );
      try {
        expect(waiting.status).toBe(200);
        await waiting.waitFor(() => waiting.events.length > 0, 5000, 'the connected event');
        expect(waiting.events[0]).toMatchObject({ event: 'connected', data: { headIndex: MAX } });
        expect(waiting.ended).toBe(false);
      } finally {
        waiting.close();
      }
    });

    it('starts on a full log without its StartMarker, and serves reads', async () => {
      // Given the full log of the test above, When the server restarts
      await server.close();
      server = await startServer(db.url, env);
      // Then it serves reads
      const head = await http(server.baseUrl, 'GET', '/api/events/head');
      expect([head.status, head.body.head]).toEqual([200, MAX]);
      expect((await http(server.baseUrl, 'GET', '/health', undefined, {})).body).toMatchObject({
        status: 'degraded',
        log: 'full',
      });
      // And an embedded application that writes a StartMarker starts too
      const app = await NestFactory.createApplicationContext(
        OrdinalModule.forRoot({ url: db.url, startMarker: true, log: { ordering } }),
        { logger: false },
      );
      try {
        expect(await app.get(LogReader).safeHead()).toBe(MAX);
      } finally {
        await app.close();
      }
    });
  },
);
