import { DataSource, type DataSourceOptions, type MigrationInterface } from 'typeorm';
import { MIGRATION_LOCK, MIGRATIONS_TABLE } from './migrations.constants.js';
import { MigrationFailedError } from '../errors/migration-failed.error.js';

type PostgresConnectionOptions = Extract<DataSourceOptions, { type: 'postgres' }>;

/** A TypeORM migration class (its name ends in a timestamp, as TypeORM requires). */
export type MigrationClass = new () => MigrationInterface;

export interface RunMigrationsOptions {
  /** How long to wait for another process's run to release the lock (ms). @default 60000 */
  lockTimeoutMs?: number;
}

/** SQLSTATE of a lock wait that hit `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Runs migrations in one transaction under an advisory lock, so several processes
 * starting at once apply each migration exactly once: the first runs them, the others wait
 * (at most `lockTimeoutMs`), then find nothing pending. Uses a short-lived DataSource of its
 * own so the application's TypeORM settings (its entities, its own migrations) don't mix in.
 * Every run records in the one `ordinal_migrations` table, Ordinal's and the user's alike.
 * The lock is a transaction lock held by a transaction of its own that stays open for the
 * run, and its `lock_timeout` is transaction-local: no session state, so it works through
 * PgBouncer in transaction mode (a session lock, or a session setting, would stay on whatever
 * server connection the pooler had lent, and an unlock could land on another).
 *
 * @returns the names of the migrations applied now
 */
export async function runMigrations(
  dataSource: DataSource,
  migrations: MigrationClass[],
  options: RunMigrationsOptions = {},
): Promise<string[]> {
  const lockTimeoutMs = options.lockTimeoutMs ?? 60_000;
  const connection = dataSource.options as PostgresConnectionOptions;
  const runner = new DataSource({
    ...connection,
    name: `ordinal-migrations-${process.pid}`,
    entities: [],
    subscribers: [],
    migrations,
    migrationsTableName: MIGRATIONS_TABLE,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    extra: { ...((connection.extra ?? {}) as Record<string, unknown>), max: 2 },
  } as PostgresConnectionOptions);
  await runner.initialize();
  const lock = runner.createQueryRunner();
  // A pool of one connection is the embedded database (PGlite): one session that all its
  // connections share, where a transaction left open for the lock would hold the session and
  // the migrations could not run; no pooler stands in front of it, so a session lock is right.
  const oneSession =
    ((connection.extra as { max?: number } | undefined)?.max ?? Number.POSITIVE_INFINITY) <= 1;
  let sessionLocked = false;
  try {
    // lock_timeout bounds the wait for the advisory lock; it is this transaction's (or session's) only lock wait.
    if (!oneSession) await lock.startTransaction();
    await lock.query(`SELECT set_config('lock_timeout', $1, $2)`, [
      `${Math.max(1, Math.floor(lockTimeoutMs))}ms`,
      !oneSession,
    ]);
    try {
      await lock.query(
        oneSession
          ? 'SELECT pg_advisory_lock($1::bigint)'
          : 'SELECT pg_advisory_xact_lock($1::bigint)',
        [MIGRATION_LOCK],
      );
      sessionLocked = oneSession;
    } catch (error) {
      if (
        (error as { driverError?: { code?: string }; code?: string }).driverError?.code ===
          LOCK_NOT_AVAILABLE ||
        (error as { code?: string }).code === LOCK_NOT_AVAILABLE
      ) {
        throw new MigrationFailedError(
          `Another process held the migration lock for more than ${lockTimeoutMs} ms; raise migrationLockTimeoutMs or find the stuck process`,
          { cause: error },
        );
      }
      throw error;
    }
    try {
      const applied = await runner.runMigrations({ transaction: 'all' });
      return applied.map((m) => m.name);
    } catch (error) {
      throw new MigrationFailedError(
        `Migrations failed and were rolled back: ${(error as Error).message}`,
        { cause: error },
      );
    }
  } finally {
    // Ending the lock's transaction releases the lock (the embedded database: unlock).
    if (lock.isTransactionActive) await lock.rollbackTransaction().catch(() => undefined);
    if (sessionLocked)
      await lock
        .query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK])
        .catch(() => undefined);
    await lock.release();
    await runner.destroy();
  }
}
