import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/** A parameterised statement: SQL builders are pure functions returning one of these. */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/** Anything a statement can run on: a QueryRunner (own transaction) or an EntityManager. */
export type SqlRunner = QueryRunner | EntityManager;

function isQueryRunner(runner: SqlRunner): runner is QueryRunner {
  return typeof (runner as QueryRunner).startTransaction === 'function';
}

/**
 * Runs a statement and returns its rows, whatever the command (TypeORM returns
 * `[rows, count]` for UPDATE/DELETE unless asked for a structured result).
 */
export async function execute<R = Record<string, unknown>>(
  runner: SqlRunner,
  query: SqlQuery,
): Promise<R[]> {
  if (isQueryRunner(runner)) {
    const result = await runner.query(query.text, query.values, true);
    return (result.records ?? []) as R[];
  }
  const own = runner.queryRunner ?? runner.connection.createQueryRunner();
  try {
    const result = await own.query(query.text, query.values, true);
    return (result.records ?? []) as R[];
  } finally {
    if (own !== runner.queryRunner) await own.release();
  }
}

/** A pg connection as the writer's hot path uses it (no QueryRunner in between). */
export interface PgConnection {
  /** `query_timeout` (ms): pg's own per-query bound on waiting for the answer, over the pool's. */
  query<R>(config: {
    name?: string;
    text: string;
    values: unknown[];
    query_timeout?: number;
  }): Promise<{ rows: R[] }>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * The writer's hot statement: runs on a pooled pg connection as a named prepared statement
 * (parsed and planned once per connection), without TypeORM's per-query logging and
 * broadcasting. `name` must be unique per statement text.
 */
export async function executePrepared<R = Record<string, unknown>>(
  connection: PgConnection,
  name: string,
  query: SqlQuery,
): Promise<R[]> {
  const result = await connection.query<R>({ name, text: query.text, values: query.values });
  return result.rows;
}

/** Runs a statement on a pooled pg connection (the writer's transactions), unprepared. */
export async function executeOn<R = Record<string, unknown>>(
  connection: PgConnection,
  query: SqlQuery,
): Promise<R[]> {
  const result = await connection.query<R>({ text: query.text, values: query.values });
  return result.rows;
}

/**
 * Runs a read-only statement as a named prepared statement on a connection of `dataSource`'s
 * pool (the writer's door: the driver's master pool), so each connection parses it once, not
 * on every call. For hot statements whose text has few shapes, one `name` per text (pg refuses a
 * name reused for another text on one connection). A connection that reported an error while
 * in use goes back destroyed; a statement's own error leaves it usable. Errors are pg's own
 * (their SQLSTATE in `code`), not TypeORM's.
 */
export async function queryPrepared<R = Record<string, unknown>>(
  dataSource: DataSource,
  name: string,
  query: SqlQuery,
): Promise<R[]> {
  const driver = dataSource.driver as unknown as {
    obtainMasterConnection(): Promise<[PgConnection, (error?: unknown) => void]>;
  };
  const [connection, giveBack] = await driver.obtainMasterConnection();
  let broken: unknown;
  const onError = (error: Error) => (broken = error);
  connection.on('error', onError);
  try {
    return await executePrepared<R>(connection, name, query);
  } finally {
    connection.off('error', onError);
    giveBack(broken);
  }
}
