import { DataSource, type MigrationInterface } from 'typeorm';
import type { DataSourceOptions } from 'typeorm';

type PostgresConnectionOptions = Extract<DataSourceOptions, { type: 'postgres' }>;
import { LOCKS, TABLES } from '../log.constants.js';

type MigrationClass = new () => MigrationInterface;

/**
 * Runs migrations in one transaction under a session advisory lock, so several processes
 * starting at once apply each migration exactly once. Uses a short-lived DataSource of its
 * own so the application's TypeORM settings (its entities, its own migrations) don't mix in.
 *
 * @returns the names of the migrations applied now
 */
export async function runMigrations(
  dataSource: DataSource,
  migrations: MigrationClass[],
): Promise<string[]> {
  const options = dataSource.options as PostgresConnectionOptions;
  const runner = new DataSource({
    ...options,
    name: `ordinal-migrations-${process.pid}`,
    entities: [],
    subscribers: [],
    migrations,
    migrationsTableName: TABLES.migrations,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    extra: { ...(options.extra ?? {}), max: 2 },
  } as PostgresConnectionOptions);
  await runner.initialize();
  const lock = runner.createQueryRunner();
  try {
    await lock.query('SELECT pg_advisory_lock($1::bigint)', [LOCKS.migrations]);
    const applied = await runner.runMigrations({ transaction: 'all' });
    await lock.query('SELECT pg_advisory_unlock($1::bigint)', [LOCKS.migrations]);
    return applied.map((m) => m.name);
  } finally {
    await lock.release();
    await runner.destroy();
  }
}
