import 'reflect-metadata';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { execute, runMigrations } from '@ordinal/pg';
import { LOG_MIGRATIONS } from '../migrations/index.js';
import { readSkippedBetween } from '../sql/index.js';
import { LateTracker } from './late-tracker.js';

/**
 * The tracker's "every transaction that could still write here has ended" must hold for a
 * transaction whose id is the newest one handed out. PostgreSQL's snapshot xmax is the latest
 * *completed* id plus one, so a transaction that took its id after the last one to complete
 * is at or above it, and is not counted in the snapshot's xmin either: on a quiet database
 * (no transaction completing after it) a bound taken from xmax alone lets the tracker forget
 * a position that transaction is about to fill. No Ordinal process runs here, so nothing else
 * takes a transaction id.
 */
describe('LateTracker and the newest running transaction', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let writer: pg.Client;

  beforeEach(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource({ type: 'postgres', url: db.url, extra: { max: 2 } });
    await dataSource.initialize();
    await runMigrations(dataSource, LOG_MIGRATIONS);
    writer = new pg.Client({ connectionString: db.url, application_name: 'by-hand' });
    await writer.connect();
  });
  afterEach(async () => {
    await writer.end().catch(() => undefined);
    await dataSource.destroy();
    await db.drop();
  });

  it('keeps waiting for a position while a transaction that inserted there (the newest id) runs, and delivers its row once it commits', async () => {
    // Given a position passed without a row, watched for a little while
    await db.query(`SELECT setval('log_passed_position', 5)`);
    await db.query(
      `INSERT INTO log_skipped (position, held_ms, released_exactly, watch_until)
       VALUES (5, 0, true, now() + interval '300 milliseconds')`,
    );
    const tracker = new LateTracker();
    const [passed] = await execute<{ xmax: string }>(dataSource.manager, readSkippedBetween(0, 5));
    tracker.add([5], passed.xmax);
    // And a transaction that inserts there while it is watched (its id is the newest handed out)
    await writer.query('BEGIN');
    await writer.query(
      `INSERT INTO messages (index, message_type, body, content_hash) VALUES (5, 'ByHand', '{}'::jsonb, 'h')`,
    );
    // When the watch ends while that transaction still runs, and the tracker looks again and again
    const deadline = Date.now() + 5000;
    while (
      (await db.query<{ over: boolean }>(`SELECT watch_until <= now() AS over FROM log_skipped`))[0]
        .over !== true
    ) {
      if (Date.now() > deadline) throw new Error('the watch did not end');
      await tracker.check(dataSource.manager);
    }
    for (let i = 0; i < 3; i++) expect(await tracker.check(dataSource.manager)).toEqual([]);
    // Then it still waits for the position
    expect(tracker.positions()).toEqual([5]);
    // And once the transaction commits, the row arrives
    await writer.query('COMMIT');
    expect((await tracker.check(dataSource.manager)).map((m) => m.id)).toEqual([5]);
  });

  it('takes as its bound an id above every running transaction, the newest included', async () => {
    // Given tables with a watched position
    await db.query(
      `INSERT INTO log_skipped (position, held_ms, released_exactly, watch_until) VALUES (5, 0, true, 'infinity')`,
    );
    for (let i = 0; i < 20; i++) {
      // When a transaction takes an id, and a reader passes the position right after
      await writer.query('BEGIN');
      const [{ x }] = (await writer.query<{ x: string }>('SELECT pg_current_xact_id()::text AS x'))
        .rows;
      const [passed] = await execute<{ xmax: string }>(
        dataSource.manager,
        readSkippedBetween(0, 5),
      );
      await writer.query('ROLLBACK');
      // Then the bound the reader keeps is above that transaction's id (a snapshot's xmax,
      // the latest completed id plus one, is not whenever nothing completed after it)
      expect(BigInt(passed.xmax)).toBeGreaterThan(BigInt(x));
    }
  });
});
