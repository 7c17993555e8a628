import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startServer, type TestServer } from '../support/test-server.js';
import { brokerUrl, uniqueName } from '../support/amqp-broker.js';

/** A DBA looking at Ordinal's schema sees what each table and column is for. */
describe('Schema comments: every table, column and sequence of Ordinal is described', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    // Given a database every module has migrated (AMQP included)
    db = await createTestDatabase();
    server = await startServer(db.url, {
      AMQP_URL: brokerUrl(),
      ORDINAL_AMQP_INPUT_QUEUE: uniqueName('comments-input'),
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('has a COMMENT on every table, column and sequence of its schema', async () => {
    const missing = await db.query<{ what: string }>(
      `SELECT format('table %s', c.relname) AS what FROM pg_class c
         WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'S')
           AND obj_description(c.oid, 'pg_class') IS NULL
       UNION ALL
       SELECT format('column %s.%s', c.relname, a.attname) FROM pg_class c
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
           AND col_description(c.oid, a.attnum) IS NULL
       ORDER BY 1`,
    );
    const tables = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'`,
    );
    expect(tables[0].n).toBeGreaterThanOrEqual(10);
    expect(missing.map((m) => m.what)).toEqual([]);
  });
});
