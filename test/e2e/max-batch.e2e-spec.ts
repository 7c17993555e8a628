import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';

describe('ORDINAL_MAX_BATCH bounds a REST batch', () => {
  let db: TestDatabase;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await db?.drop();
  });
  // Distinct bodies throughout: the duplicate window would skip a repeated one.
  let next = 0;
  const batch = (n: number) => ({
    messages: Array.from({ length: n }, () => ({ messageType: 'Counted', content: { i: next++ } })),
  });
  const count = async () =>
    Number(
      (
        await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM messages WHERE message_type = 'Counted'",
        )
      )[0].n,
    );

  it('stores a batch at the limit and refuses one above it with a 400 naming the limit, storing nothing', async () => {
    // Given a server with ORDINAL_MAX_BATCH=3
    const server = await startServer(db.url, { ORDINAL_MAX_BATCH: '3' });
    servers.push(server);
    // When a batch of 3 and then one of 4 are posted
    const atLimit = await http(server.baseUrl, 'POST', '/api/events/messages', batch(3));
    const above = await http(server.baseUrl, 'POST', '/api/events/messages', batch(4));
    // Then the first is stored, the second is a 400 that says what to do, and nothing of it is stored
    expect(atLimit.status).toBe(201);
    expect(above.status).toBe(400);
    expect(above.body.message).toMatch(
      /at most 3 messages in one batch \(ORDINAL_MAX_BATCH\), got 4/,
    );
    expect(await count()).toBe(3);
  });

  it('defaults to 1,000 and takes a larger limit than the old fixed one', async () => {
    const byDefault = await startServer(db.url);
    const raised = await startServer(db.url, {
      ORDINAL_MAX_BATCH: '1500',
      ORDINAL_BODY_LIMIT: String(4 * 1024 * 1024),
    });
    servers.push(byDefault, raised);
    expect(
      (await http(byDefault.baseUrl, 'POST', '/api/events/messages', batch(1001))).status,
    ).toBe(400);
    expect((await http(raised.baseUrl, 'POST', '/api/events/messages', batch(1200))).status).toBe(
      201,
    );
    expect(await count()).toBe(3 + 1200);
  });
});
