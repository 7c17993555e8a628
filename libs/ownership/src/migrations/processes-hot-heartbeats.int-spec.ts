import pg from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { runMigrations } from '@ordinal/pg';
import { OWNERSHIP_MIGRATIONS } from './index.js';
import { heartbeat } from '../sql/index.js';

const HEARTBEATS = 50;

describe('consumer_processes: heartbeats are HOT updates', () => {
  let db: TestDatabase;
  let client: pg.Client | null = null;

  beforeAll(async () => {
    db = await createTestDatabase(undefined, { blank: true });
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('updates the process row in place (no index on a column a heartbeat changes)', async () => {
    // Given the ownership schema
    const dataSource = new DataSource({ type: 'postgres', url: db.url, extra: { max: 1 } });
    await dataSource.initialize();
    try {
      await runMigrations(dataSource, OWNERSHIP_MIGRATIONS);
    } finally {
      await dataSource.destroy();
    }
    // When one process heartbeats 50 times (the first inserts its row)
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    for (let i = 0; i <= HEARTBEATS; i++) {
      const q = heartbeat('owner-1', 1, 'host', 10_000, ['g'], []);
      await client.query(q.text, q.values);
    }
    await client.query('SELECT pg_stat_force_next_flush()');
    // Then the statistics (once flushed) count 50 updates, (nearly) all of them HOT
    const stats = async () =>
      (
        await db.query<{ upd: string; hot: string }>(
          `SELECT n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot
             FROM pg_stat_user_tables WHERE relname = 'consumer_processes'`,
        )
      )[0];
    const deadline = Date.now() + 10_000;
    while (Number((await stats()).upd) < HEARTBEATS && Date.now() < deadline) {
      await client.query('SELECT pg_stat_force_next_flush()');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { upd, hot } = await stats();
    expect(Number(upd)).toBe(HEARTBEATS);
    // A page with no room left can force a non-HOT update now and then, never most of them.
    expect(Number(hot)).toBeGreaterThanOrEqual(HEARTBEATS * 0.9);
  });
});
