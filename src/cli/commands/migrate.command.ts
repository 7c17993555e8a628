import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { MigrationClass } from '@ordinal/pg';
import type { Command } from '../command.js';
import { CliError, EXIT, UsageError } from '../cli-error.js';

/** Every class a module exports that looks like a TypeORM migration (has `up`). */
async function userMigrations(path: string): Promise<MigrationClass[]> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(`Cannot load --migrations ${path}: ${(error as Error).message}`);
  }
  const found = Object.values(module)
    .flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : [v]))
    .filter(
      (v): v is MigrationClass =>
        typeof v === 'function' &&
        typeof (v.prototype as { up?: unknown } | undefined)?.up === 'function',
    );
  if (found.length === 0)
    throw new CliError(
      `--migrations ${path} exports no migration classes (classes with an up() method, or arrays of them)`,
    );
  return [...new Set(found)];
}

export const migrateCommand: Command = {
  name: 'migrate',
  usage: 'migrate [--database-url URL] [--migrations module.js]',
  summary:
    "Runs every pending migration (the log's, aggregates', subscriptions', the AMQP bookmarks' and yours) in one transaction under the migration lock, then exits. No server needed: it talks to PostgreSQL.",
  details: [
    'Flags:',
    '  --database-url URL     the database (DATABASE_URL)',
    "  --migrations FILE      also your read models' migrations: a built module exporting migration classes (or arrays of them)",
  ].join('\n'),
  server: false,
  options: { 'database-url': { type: 'string' }, migrations: { type: 'string' } },
  async run({ values, env, term }) {
    const url = (values['database-url'] as string | undefined) || env.DATABASE_URL;
    if (!url)
      throw new UsageError(
        'migrate needs the database: set DATABASE_URL or pass --database-url postgres://user@host:5432/db',
      );
    // Loaded here, not at the top: TypeORM and the libraries cost every other command's start-up.
    const [
      { DataSource },
      { runMigrations, connectionUrlProblem, maskCredentials },
      { ordinalMigrations },
    ] = await Promise.all([
      import('typeorm'),
      import('@ordinal/pg'),
      import('../../ordinal-migrations.js'),
    ]);
    const migrations = await ordinalMigrations();
    if (typeof values.migrations === 'string')
      migrations.push(...(await userMigrations(values.migrations)));
    const problem = connectionUrlProblem(url, 'DATABASE_URL', ['postgres:', 'postgresql:']);
    if (problem) throw new CliError(maskCredentials(problem), EXIT.usage);
    const dataSource = new DataSource({
      type: 'postgres',
      url,
      extra: { connectionTimeoutMillis: 5000, application_name: 'ordinal-migrate' },
    });
    let applied: string[];
    try {
      applied = await runMigrations(dataSource, migrations);
    } catch (error) {
      const code =
        (error as { code?: string }).code ??
        (error as { driverError?: { code?: string } }).driverError?.code;
      const where = new URL(url);
      if (code && /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|3D000|28P01|28000)$/.test(code)) {
        throw new CliError(
          `Cannot reach PostgreSQL at ${where.hostname}:${where.port || 5432}${where.pathname} (${code}): check DATABASE_URL`,
          EXIT.unreachable,
        );
      }
      throw new CliError(`Migrations failed: ${(error as Error).message}`);
    }
    term.out(
      applied.length === 0
        ? 'Nothing to migrate: the schema is up to date\n'
        : `Applied ${applied.length} migration(s): ${applied.join(', ')}\n`,
    );
  },
};
