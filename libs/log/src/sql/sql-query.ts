import type { EntityManager, QueryRunner } from 'typeorm';

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

/**
 * The writer's hot statement: runs on the QueryRunner's own pg connection as a named
 * prepared statement (parsed and planned once per connection), without TypeORM's per-query
 * logging and broadcasting. `name` must be unique per statement text.
 */
export async function executePrepared<R = Record<string, unknown>>(runner: QueryRunner, name: string, query: SqlQuery): Promise<R[]> {
  const client = (await runner.connect()) as { query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }> };
  const result = await client.query({ name, text: query.text, values: query.values });
  return result.rows;
}
