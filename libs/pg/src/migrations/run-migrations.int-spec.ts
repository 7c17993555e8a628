import pg from 'pg';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { MigrationFailedError } from '../errors/index.js';
import { MIGRATION_LOCK } from './migrations.constants.js';
import { runMigrations } from './run-migrations.js';

class CreateThings1767225600200 implements MigrationInterface {
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE things (id int PRIMARY KEY)');
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE things');
  }
}

class Broken1767225600201 implements MigrationInterface {
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE half_done (id int)');
    await runner.query('SELECT no_such_function()');
  }
  async down(): Promise<void> {}
}

describe('runMigrations (the migration advisory lock)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  beforeEach(async () => {
    db = await createTestDatabase(undefined, { blank: true });
    dataSource = new DataSource({ type: 'postgres', url: db.url, entities: [] });
    await dataSource.initialize();
  });
  afterEach(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  it('applies each migration once when several runs start at the same moment, and releases the lock', async () => {
    const runs = await Promise.all(
      [1, 2, 3].map(() => runMigrations(dataSource, [CreateThings1767225600200])),
    );
    expect(runs.flat()).toEqual(['CreateThings1767225600200']);
    // Advisory locks are per database; pg_locks lists the whole cluster's (other suites migrate their own databases meanwhile).
    const locks = await db.query(
      'SELECT 1 FROM pg_locks WHERE locktype = $1 AND objid = $2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())',
      ['advisory', MIGRATION_LOCK],
    );
    expect(locks).toEqual([]);
  });

  it('fails with MigrationFailedError after the lock timeout while another process holds the lock', async () => {
    // Given another session holding the migration lock
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK]);
      // When a run starts with a short lock timeout
      const started = Date.now();
      const attempt = runMigrations(dataSource, [CreateThings1767225600200], {
        lockTimeoutMs: 300,
      });
      // Then it gives up after about that long, saying why
      await expect(attempt).rejects.toBeInstanceOf(MigrationFailedError);
      await expect(attempt).rejects.toThrow(/held the migration lock for more than 300 ms/);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await holder.end();
    }
    // And once the holder is gone, the migrations run
    expect(
      await runMigrations(dataSource, [CreateThings1767225600200], { lockTimeoutMs: 300 }),
    ).toEqual(['CreateThings1767225600200']);
  });

  it('rolls a failed run back whole and releases the lock for the next start', async () => {
    await expect(
      runMigrations(dataSource, [CreateThings1767225600200, Broken1767225600201]),
    ).rejects.toThrow(MigrationFailedError);
    const tables = await db.query(
      "SELECT to_regclass('things') IS NULL AS gone, to_regclass('half_done') IS NULL AS half_gone",
    );
    expect(tables).toEqual([{ gone: true, half_gone: true }]);
    expect(
      await runMigrations(dataSource, [CreateThings1767225600200], { lockTimeoutMs: 1000 }),
    ).toEqual(['CreateThings1767225600200']);
  });
});
