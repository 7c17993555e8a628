import pg from 'pg';
import type { DataSource } from 'typeorm';
import { DatabaseUnavailableError, isConnectionError, type SqlQuery } from '@ordinal/pg';
import { createKeyStore } from './sql/key-store.sql.js';

/**
 * The connection to the key store: the log's own database (its `DataSource`, another schema) or
 * a database of its own (`keyStoreUrl`, a pool of its own), so its backups can be kept apart
 * from the log's.
 */
export class KeyStoreConnection {
  private readonly pool: pg.Pool | null;

  constructor(
    private readonly dataSource: DataSource,
    url: string | null,
    private readonly schema: string,
  ) {
    this.pool = url ? new pg.Pool({ connectionString: url, max: 4 }) : null;
  }

  /** Whether the store is in a database of its own. */
  get separate(): boolean {
    return this.pool !== null;
  }

  async query<R>(query: SqlQuery): Promise<R[]> {
    try {
      if (this.pool) return (await this.pool.query(query.text, query.values)).rows as R[];
      return await this.dataSource.query<R[]>(query.text, query.values);
    } catch (error) {
      if (isConnectionError(error))
        throw new DatabaseUnavailableError(
          'The personal-data key store is unavailable; retry later',
          false,
          {
            cause: error,
          },
        );
      throw error;
    }
  }

  /** Makes the store's schema (idempotent, under an advisory lock), in one transaction. */
  async create(): Promise<void> {
    const statements = createKeyStore(this.schema);
    if (this.pool) {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        for (const text of statements) await client.query(text);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
      return;
    }
    await this.dataSource.transaction(async (manager) => {
      for (const text of statements) await manager.query(text);
    });
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}
