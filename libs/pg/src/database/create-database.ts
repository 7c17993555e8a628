import pg from 'pg';
import { DatabaseMissingError } from '../errors/database-missing.error.js';
import { maskCredentials } from '../options/connection-url.js';

/** The names Ordinal creates: an identifier cannot be a parameter, so only these are spliced in. */
const CREATABLE = /^[A-Za-z0-9_]+$/;

/**
 * Where the database goes: the connection settings of `pg`'s client config that matter here.
 * Declared here rather than as `pg.ClientConfig`, so that this package's public types do not
 * need `@types/pg` in a service that installs it.
 */
export interface CreateDatabaseConfig {
  database: string;
  connectionString?: string;
  host?: string;
  port?: number;
  user?: string;
  password?: unknown;
  ssl?: unknown;
  [setting: string]: unknown;
}

/**
 * Creates the database `config` names, connecting to the server's `postgres` maintenance
 * database with the same role. `created: false` when another process created it meanwhile.
 * Used in development by the server (its default database) and by `OrdinalModule`
 * (`createDatabase`). Throws DatabaseMissingError saying why it could not (a name Ordinal does
 * not create, a role without CREATEDB, …); the message never shows a password.
 */
export async function createDatabase(
  config: CreateDatabaseConfig,
  where: string,
): Promise<{ created: boolean }> {
  const database = config.database;
  if (!CREATABLE.test(database))
    throw new DatabaseMissingError(
      database,
      `Database '${database}' does not exist on ${where} and its name is not one Ordinal creates ([A-Za-z0-9_]); create it yourself (CREATE DATABASE)`,
    );
  const maintenance = { ...config, database: 'postgres' } as pg.ClientConfig;
  if (config.connectionString) {
    const url = new URL(config.connectionString);
    url.pathname = '/postgres';
    maintenance.connectionString = url.toString();
  }
  const admin = new pg.Client({ connectionTimeoutMillis: 5000, ...maintenance });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    return { created: true };
  } catch (error) {
    const e = error as { code?: string; message: string };
    if (e.code === '42P04') return { created: false }; // created meanwhile by another process
    throw new DatabaseMissingError(
      database,
      maskCredentials(
        `Database '${database}' does not exist on ${where} and could not be created (${e.code ? `${e.code}: ` : ''}${e.message}); create it (CREATE DATABASE ${database}) or use a role with CREATEDB`,
      ),
      { cause: error },
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
}
