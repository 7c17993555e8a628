import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, waitFor } from '../support/test-server.js';
import { startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';

/** Hidden rows the run has to erase: enough batches of 50 for a kill to land halfway. */
const ROWS = 6000;

describe('Scavenge killed with kill -9 halfway (docs/lifecycle.md)', () => {
  let db: TestDatabase;
  let server: OrdinalProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await db?.drop();
  });

  const start = () => startOrdinalProcess(db.url, { ORDINAL_ENV: 'development' });
  const counts = async () => {
    const [row] = await db.query<{
      erased: string;
      run_rows: string;
      run_position: string;
      status: string;
    }>(
      `SELECT (SELECT count(*) FROM messages WHERE erased IS NOT NULL)::text AS erased,
              r.rows_erased::text AS run_rows, r.position::text AS run_position, r.status
       FROM scavenge_runs r ORDER BY r.id DESC LIMIT 1`,
    );
    return row;
  };

  it('run again, it resumes the same run, finishes, and counts every erased row once', async () => {
    // Given a log with ROWS messages of a category whose rule hides them all
    server = await start();
    const [{ head }] = await db.query<{ head: string }>(
      'SELECT position::text AS head FROM log_head',
    );
    await db.query(
      `INSERT INTO messages (index, message_type, body, metadata, content_hash, stream_id, stream_version, category)
       SELECT $1::bigint + g, 'Old', jsonb_build_object('secret', g), '{"m": 1}', md5(g::text), 'gone-' || (g % 10), g / 10 + 1, 'gone'
       FROM generate_series(1, $2::bigint) g`,
      [head, ROWS],
    );
    await db.query('UPDATE log_head SET position = position + $1', [ROWS]);
    expect(
      (
        await http(
          server.baseUrl,
          'PUT',
          '/api/streams/gone-*/metadata',
          { truncateBefore: 1000000 },
          DEV_AUTH,
        )
      ).status,
    ).toBe(200);
    // When a scavenge in small batches is killed with SIGKILL halfway
    const started = await http(
      server.baseUrl,
      'POST',
      '/api/admin/scavenge?batchSize=50&throttlePercent=100',
      undefined,
      DEV_AUTH,
    );
    expect(started.status).toBe(202);
    const runId = started.body.id as number;
    await waitFor(
      async () => Number((await counts()).run_position) > Number(head) + ROWS / 4,
      60_000,
      'the run to get a quarter of the way',
    );
    await server.stop('SIGKILL');
    server = undefined;
    // Then the run is left running part-way, its counts exactly the rows erased so far
    const killed = await counts();
    expect(killed.status).toBe('running');
    expect(Number(killed.run_rows)).toBeGreaterThan(0);
    expect(Number(killed.run_rows)).toBeLessThan(ROWS);
    expect(killed.run_rows).toBe(killed.erased);
    // When it is run again on a new server process
    server = await start();
    const again = await http(
      server.baseUrl,
      'POST',
      '/api/admin/scavenge?wait=true&batchSize=500&throttlePercent=100',
      undefined,
      DEV_AUTH,
    );
    // Then the same run resumes and finishes with every hidden row erased, counted once
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: runId, status: 'finished', rowsErased: ROWS });
    expect(await counts()).toMatchObject({
      erased: String(ROWS),
      run_rows: String(ROWS),
      status: 'finished',
    });
    const [left] = await db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM messages WHERE category = 'gone' AND (body <> 'null'::jsonb OR metadata IS NOT NULL)`,
    );
    expect(left.n).toBe('0');
  });
});
