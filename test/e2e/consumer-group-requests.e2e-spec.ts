import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';

/**
 * The bodies of `POST …/fetch` and `POST …/parked/replay` are checked against their DTOs as
 * those of ack and nack are: a 400 naming the field, before anything reaches the database.
 * Both bodies may be left out (the defaults).
 */
describe('consumer group fetch and replay bodies are validated', () => {
  let db: TestDatabase;
  let server: TestServer;
  const GROUP = '/api/consumer-groups/checked';

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url);
    await http(server.baseUrl, 'PUT', GROUP, { source: { types: ['CheckedBody'] } });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it.each<[string, Record<string, unknown>]>([
    ['memberId', { memberId: 5 }],
    ['memberId', { memberId: { a: 1 } }],
    ['memberId', { memberId: '' }],
    ['max', { max: -1 }],
    ['max', { max: '5' }],
    ['max', { max: 1.5 }],
    ['max', { max: 10_001 }],
    ['waitMs', { waitMs: 'abc' }],
    ['waitMs', { waitMs: -1 }],
    ['waitMs', { waitMs: 35_000 }],
  ])('fetch refuses a bad %s with a 400 naming it: %j', async (field, body) => {
    const res = await http(server.baseUrl, 'POST', `${GROUP}/fetch`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      message: expect.stringMatching(new RegExp(`^${field}: `)),
      fields: [{ field, problems: expect.any(Array) }],
    });
    // Nothing reached the group: no member was made up
    expect((await http(server.baseUrl, 'GET', GROUP)).body.members).toEqual([]);
  });

  it('fetch refuses an unknown field with 400 unknown_field naming it', async () => {
    const res = await http(server.baseUrl, 'POST', `${GROUP}/fetch`, { wait: 100 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'unknown_field',
      message: expect.stringMatching(/^wait: not a field/),
      fields: [{ field: 'wait' }],
    });
  });

  it.each<[string, Record<string, unknown>]>([
    ['limit', { limit: -1 }],
    ['limit', { limit: 0 }],
    ['limit', { limit: '5' }],
    ['limit', { limit: 10_001 }],
  ])('replay refuses a bad %s with a 400 naming it: %j', async (field, body) => {
    const res = await http(server.baseUrl, 'POST', `${GROUP}/parked/replay`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      message: expect.stringMatching(new RegExp(`^${field}: `)),
      fields: [{ field, problems: expect.any(Array) }],
    });
  });

  it('replay refuses an unknown field with 400 unknown_field naming it', async () => {
    const res = await http(server.baseUrl, 'POST', `${GROUP}/parked/replay`, { limitt: 1 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'unknown_field',
      message: expect.stringMatching(/^limitt: not a field/),
    });
  });

  it('both bodies may be left out (the defaults), or given valid', async () => {
    const fetched = await http(server.baseUrl, 'POST', `${GROUP}/fetch`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toMatchObject({ memberId: expect.any(String), epoch: 1, events: [] });
    const named = await http(server.baseUrl, 'POST', `${GROUP}/fetch`, {
      memberId: 'm-1',
      max: 0,
      waitMs: 0,
    });
    expect(named.status).toBe(200);
    expect(named.body).toMatchObject({ memberId: 'm-1', events: [] });
    const replayed = await http(server.baseUrl, 'POST', `${GROUP}/parked/replay`);
    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual({ replayed: [], checkpoint: expect.any(Number) });
    expect(
      (await http(server.baseUrl, 'POST', `${GROUP}/parked/replay`, { limit: 10 })).status,
    ).toBe(200);
  });
});
