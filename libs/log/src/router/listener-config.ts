import type pg from 'pg';
import type { DataSource } from 'typeorm';

interface PostgresCredentials {
  url?: string;
  host?: string;
  port?: number;
  username?: string;
  password?: string | (() => string) | (() => Promise<string>);
  database?: string;
  ssl?: unknown;
}

/** The pg settings of a dedicated connection with the same credentials as the DataSource. */
export function listenerClientConfig(dataSource: DataSource): pg.ClientConfig {
  const o = dataSource.options as PostgresCredentials;
  const ssl = o.ssl as pg.ClientConfig['ssl'];
  if (o.url) return { connectionString: o.url, ...(ssl !== undefined ? { ssl } : {}) };
  return {
    host: o.host,
    port: o.port,
    user: o.username,
    password: o.password,
    database: o.database,
    ssl,
  };
}
