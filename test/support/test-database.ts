import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** A database of one's own for one suite: created fresh (migrated, unless asked blank), dropped afterwards (even if busy). */
export interface TestDatabase {
  name: string;
  url: string;
  /**
   * Runs SQL on the suite's database, on a connection of a small pool of the suite's (one
   * session per call is not promised: nothing session-scoped belongs here).
   */
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<R[]>;
  /** Runs SQL on the server's maintenance database (to kill or lock out this database's sessions). */
  admin(text: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

/** The server every suite uses (resolved by test/support/global-setup.mjs). */
export function serverUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

async function onMaintenance<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(serverUrl());
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * The connections of a suite's own queries. Tests poll the database (`waitFor` every 50 ms),
 * and a connection per call cost PostgreSQL about 25 ms of CPU per poll on the 2-core CI
 * machine (a backend's start; PostgreSQL takes about 30% of the suite's CPU, see the README).
 * Idle ones close after a second; a suite that forgets `drop()` still exits.
 */
function suitePool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: 8,
    idleTimeoutMillis: 1000,
    allowExitOnIdle: true,
  });
  // An idle connection a test ends on purpose (terminating the database's sessions, an outage)
  // leaves the pool quietly; the next call takes another.
  pool.on('error', () => undefined);
  return pool;
}

/** A connection's own end (terminated by a test, its server gone), not the statement's error. */
const connectionLost = (error: unknown): boolean => {
  const e = error as { code?: string; message?: string };
  return (
    /^(57P0[123]|08)/.test(e.code ?? '') ||
    /Connection terminated|ECONNRESET|connection error/i.test(e.message ?? '')
  );
};

/** One statement on the pool; once more when its connection was ended under it (the pool drops that one). */
async function pooledQuery<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  text: string,
  values?: unknown[],
): Promise<R[]> {
  try {
    return (await pool.query<R>(text, values)).rows;
  } catch (error) {
    if (!connectionLost(error)) throw error;
    return (await pool.query<R>(text, values)).rows;
  }
}

/** How a suite's database starts. */
export interface TestDatabaseOptions {
  /**
   * Blank, with no migration run: for suites about migrations themselves (what a first start
   * does, a migration over existing rows, several starts racing for the lock), and for those
   * whose database a role of the test's must own, or pg_restore must fill, from the start.
   */
  blank?: boolean;
}

/**
 * The migrated template of this run (test/support/global-setup.mjs), when there is one: a
 * database created from it has every migration of the build already run, and whatever its
 * code finds pending still runs at its start.
 */
function template(): string | null {
  const name = process.env.ORDINAL_TEST_TEMPLATE;
  return name && name !== '0' ? name : null;
}

export async function createTestDatabase(
  prefix = 'ordinal_test',
  options: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  const name = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const from = options.blank ? null : template();
  await onMaintenance((c) =>
    c.query(from ? `CREATE DATABASE ${name} TEMPLATE ${from}` : `CREATE DATABASE ${name}`),
  );
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  const pool = suitePool(url.toString());
  return {
    name,
    url: url.toString(),
    query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      pooledQuery<R>(pool, text, values),
    async admin(text, values) {
      return onMaintenance(
        async (c) => (await c.query<Record<string, unknown>>(text, values)).rows,
      );
    },
    async drop() {
      // Not awaited: a query of the suite's still waiting (on a lock, say) would hold the
      // pool's end until it ended; the FORCE below ends its session, and with it the pool.
      void pool.end().catch(() => undefined);
      // A process of the suite's that is still reconnecting can slip in between FORCE's
      // terminate and the drop ("being accessed by other users"): try again a few times.
      for (let attempt = 1; ; attempt++) {
        try {
          await onMaintenance((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
          return;
        } catch (error) {
          if (attempt >= 5) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    },
  };
}
