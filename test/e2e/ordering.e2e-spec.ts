import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';

/** Checks G4 on the table itself: indices are exactly 1..N. */
async function expectGapFree(db: TestDatabase): Promise<number> {
  const [row] = await db.query<{ n: string; min: string; max: string; distinct: string }>(
    'SELECT count(*) AS n, min(index) AS min, max(index) AS max, count(DISTINCT index) AS distinct FROM messages',
  );
  expect(Number(row.min)).toBe(1);
  expect(Number(row.max)).toBe(Number(row.n));
  expect(Number(row.distinct)).toBe(Number(row.n));
  return Number(row.n);
}

async function produce(baseUrl: string, producer: number, count: number, tag: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await http(baseUrl, 'PUT', '/api/events/message', { messageType: 'Tick', userId: `p-${producer}`, content: { tag, producer, i } });
    if (res.status !== 201) throw new Error(`producer ${producer} message ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    ids.push(res.body.id);
  }
  return ids;
}

describe('ordering under concurrency (G4, L2, L3)', () => {
  let db: TestDatabase;
  afterEach(async () => {
    await db?.drop();
  });

  it('32 concurrent producers x 500 messages: distinct indices, the table holds exactly 1..N', async () => {
    // Given one server
    db = await createTestDatabase();
    const server = await startServer(db.url);
    try {
      // When 32 producers publish 500 messages each at the same time
      const perProducer = await Promise.all(Array.from({ length: 32 }, (_, p) => produce(server.baseUrl, p, 500, 'one')));
      // Then every 201 carried a distinct index, each producer's in increasing order
      const all = perProducer.flat();
      expect(all).toHaveLength(16_000);
      expect(new Set(all).size).toBe(16_000);
      for (const ids of perProducer) expect(ids).toEqual([...ids].sort((a, b) => a - b));
      // And the table holds exactly 1..N (the StartMarker plus the 16,000)
      expect(await expectGapFree(db)).toBe(16_001);
    } finally {
      await server.close();
    }
  });

  it('two server processes with separate pools on one database stay gap-free', async () => {
    // Given two servers (two Nest apps, two pools) on the same database
    db = await createTestDatabase();
    const a = await startServer(db.url);
    const b = await startServer(db.url);
    try {
      // When both ingest concurrently
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, p) => produce(p % 2 === 0 ? a.baseUrl : b.baseUrl, p, 150, 'two')),
      );
      // Then no index was handed out twice and the log is 1..N with no gap
      const all = results.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(await expectGapFree(db)).toBe(2 + 16 * 150);
      const markers = await db.query('SELECT index FROM messages WHERE message_type = $1', ['StartMarker']);
      expect(markers).toHaveLength(2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
