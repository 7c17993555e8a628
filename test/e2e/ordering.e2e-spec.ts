import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer } from '../support/test-server.js';
import { startOrdinalProcess } from '../support/ordinal-process.js';

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

async function produce(
  baseUrl: string,
  producer: number,
  count: number,
  tag: string,
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await http(baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Tick',
      userId: `p-${producer}`,
      content: { tag, producer, i },
    });
    if (res.status !== 201)
      throw new Error(
        `producer ${producer} message ${i}: ${res.status} ${JSON.stringify(res.body)}`,
      );
    ids.push(res.body.id);
  }
  return ids;
}

describe('ordering under concurrency (G4, L2, L3)', () => {
  let db: TestDatabase;
  afterEach(async () => {
    await db?.drop();
  });

  it('32 concurrent producers x 200 messages: distinct indices, the table holds exactly 1..N', async () => {
    // Given one server
    db = await createTestDatabase();
    const server = await startServer(db.url);
    try {
      // When 32 producers publish 200 messages each at the same time
      const perProducer = await Promise.all(
        Array.from({ length: 32 }, (_, p) => produce(server.baseUrl, p, 200, 'one')),
      );
      // Then every 201 carried a distinct index, each producer's in increasing order
      const all = perProducer.flat();
      expect(all).toHaveLength(6_400);
      expect(new Set(all).size).toBe(6_400);
      for (const ids of perProducer) expect(ids).toEqual([...ids].sort((a, b) => a - b));
      // And the table holds exactly 1..N (the StartMarker plus the 6,400)
      expect(await expectGapFree(db)).toBe(6_401);
    } finally {
      await server.close();
    }
  });

  it('two server processes on one database stay gap-free', async () => {
    // Given two server processes (two Node processes, two pools) on the same database
    db = await createTestDatabase();
    const [a, b] = await Promise.all([
      startOrdinalProcess(db.url, { ORDINAL_ORDERING: 'gapless' }),
      startOrdinalProcess(db.url, { ORDINAL_ORDERING: 'gapless' }),
    ]);
    try {
      expect(a.child.pid).not.toBe(b.child.pid);
      // When both ingest concurrently
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, p) =>
          produce(p % 2 === 0 ? a.baseUrl : b.baseUrl, p, 150, 'two'),
        ),
      );
      // Then no index was handed out twice and the log is 1..N with no gap
      const all = results.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(await expectGapFree(db)).toBe(2 + 16 * 150);
      const markers = await db.query('SELECT index FROM messages WHERE message_type = $1', [
        'StartMarker',
      ]);
      expect(markers).toHaveLength(2);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('concurrent mode: appends to many categories in parallel, unique indices and versions, readers see every one in order', async () => {
    // Given a server in concurrent mode
    db = await createTestDatabase();
    const server = await startServer(db.url, { ORDINAL_ORDERING: 'concurrent' });
    try {
      // When 8 writers append to streams of 4 categories and plain messages at the same time
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 25; i++) {
          const streamId = `cat${w % 4}-s${w}`;
          const res = await http(server.baseUrl, 'POST', `/api/streams/${streamId}/events`, {
            expectedVersion: i,
            events: [{ eventType: 'Step', data: { w, i } }],
          });
          if (res.status !== 201)
            throw new Error(`${streamId}: ${res.status} ${JSON.stringify(res.body)}`);
          const plain = await http(server.baseUrl, 'PUT', '/api/events/message', {
            messageType: 'Plain',
            content: { w, i },
          });
          if (plain.status !== 201) throw new Error(`plain: ${plain.status}`);
        }
      });
      await Promise.all(writers);
      // Then every stream has versions 1..25 and no index was given twice
      const rows = await db.query<{ stream_id: string; versions: string[] }>(
        `SELECT stream_id, array_agg(stream_version::text ORDER BY stream_version) AS versions FROM messages WHERE stream_id IS NOT NULL GROUP BY stream_id`,
      );
      expect(rows).toHaveLength(8);
      for (const r of rows)
        expect(r.versions.map(Number)).toEqual(Array.from({ length: 25 }, (_, k) => k + 1));
      const [{ n, distinct }] = await db.query<{ n: string; distinct: string }>(
        'SELECT count(*) AS n, count(DISTINCT index) AS distinct FROM messages',
      );
      expect(distinct).toBe(n);
      // And a reader paging the log gets all of them, in index order (through the watermark)
      const seen: number[] = [];
      let from = 1;
      for (;;) {
        const page = await http(server.baseUrl, 'GET', `/api/events?fromIndex=${from}&limit=1000`);
        seen.push(...page.body.messages.map((m: { id: number }) => m.id));
        if (page.body.nextIndex === from) break;
        from = page.body.nextIndex;
        if (page.body.messages.length === 0) break;
      }
      const all = (
        await db.query<{ index: string }>('SELECT index FROM messages ORDER BY index')
      ).map((r) => Number(r.index));
      expect(seen).toEqual(all);
    } finally {
      await server.close();
    }
  });
});
