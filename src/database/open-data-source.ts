import { Logger } from '@nestjs/common';
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  createDatabase,
  DatabaseMissingError,
  isMissingDatabase,
  maskCredentials,
} from '@ordinal/pg';

/** The connection settings of a DataSource's options, as pg takes them and as a log line names them. */
function target(options: DataSourceOptions): {
  config: {
    connectionString?: string;
    host?: string;
    port?: number;
    user?: string;
    password?: string;
    database: string;
  };
  where: string;
} {
  const o = options as {
    url?: string;
    host?: string;
    port?: number;
    username?: string;
    password?: string;
    database?: string;
  };
  if (o.url) {
    const url = new URL(o.url);
    return {
      config: {
        connectionString: o.url,
        database: o.database ?? decodeURIComponent(url.pathname.slice(1)),
      },
      where: `${url.hostname}:${url.port || 5432}`,
    };
  }
  const host = o.host ?? 'localhost';
  const port = o.port ?? 5432;
  return {
    config: { host, port, user: o.username, password: o.password, database: o.database ?? '' },
    where: `${host}:${port}`,
  };
}

/**
 * Opens the DataSource `OrdinalModule` creates (TypeOrmModule's `dataSourceFactory`). A missing
 * database (SQLSTATE 3D000) is created when `createDatabase` is on (development, as the server
 * does for its own), once, with one log line; otherwise it fails at once with a
 * DatabaseMissingError naming the database, the server and what to do (no retries: the retry
 * policy leaves it alone).
 */
export async function openDataSource(
  options: DataSourceOptions,
  createIfMissing: boolean,
  logger = new Logger('OrdinalModule'),
): Promise<DataSource> {
  // TypeOrmModule initializes it later itself when asked to (manualInitialization: the user does).
  if ((options as { manualInitialization?: boolean }).manualInitialization)
    return new DataSource(options);
  try {
    return await new DataSource(options).initialize();
  } catch (error) {
    if (!isMissingDatabase(error)) throw error;
    const { config, where } = target(options);
    if (!createIfMissing)
      throw new DatabaseMissingError(
        config.database,
        `Database '${config.database}' does not exist on PostgreSQL at ${where} (SQLSTATE 3D000): create it (CREATE DATABASE ${config.database}), point the url at an existing one, or set createDatabase: true (the default unless NODE_ENV=production)`,
        { cause: error },
      );
    const { created } = await createDatabase(config, where);
    if (created)
      logger.log(
        maskCredentials(
          `Created database '${config.database}' on ${where} (it did not exist; createDatabase is on)`,
        ),
      );
    return new DataSource(options).initialize();
  }
}
