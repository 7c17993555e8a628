import { ordinalMigrations } from '@ordinal/nestjs';
import { runMigrations } from '@ordinal/pg';
import { DataSource } from 'typeorm';

/**
 * `ORDINAL_MIGRATIONS=only`: every migration the server would run at start (the libraries',
 * the AMQP bookmarks' included), in one transaction under the migration lock, and nothing
 * else: no HTTP, no consumers, no StartMarker. Resolves with the names applied now.
 */
export async function migrateOnly(databaseUrl: string): Promise<string[]> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: databaseUrl,
    extra: { connectionTimeoutMillis: 5000, application_name: 'ordinal-migrate' },
  });
  return runMigrations(dataSource, await ordinalMigrations());
}
