import pg from 'pg';
import type { LogRole } from '@ordinal/log';

/** PostgreSQL cannot be reached at start: the message is one line saying what to do. */
export class DatabaseUnreachableError extends Error {}

function describe(url: URL): string {
  return `${url.hostname}:${url.port || 5432}/${decodeURIComponent(url.pathname.slice(1))}`;
}

/**
 * Checks that the database answers before the server starts, so an outage is one clear
 * line instead of a stack trace; in development creates the database when it is missing.
 */
export async function prepareDatabase(
  databaseUrl: string,
  createIfMissing: boolean,
  role: LogRole = 'primary',
): Promise<{ created: boolean }> {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  const hint =
    'set DATABASE_URL to a reachable PostgreSQL, or start one with: docker compose -f docker/compose.yml up -d';
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    const e = error as { code?: string; message: string };
    if (e.code !== '3D000' || !createIfMissing) {
      await client.end().catch(() => undefined);
      throw new DatabaseUnreachableError(
        `Cannot reach PostgreSQL at ${describe(url)} (${e.code ?? e.message}): ${hint}`,
      );
    }
    await client.end().catch(() => undefined);
    return createDatabase(databaseUrl, database, hint, url);
  }
  try {
    await checkRole(client, role, url);
    return { created: false };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A primary on a standby would fail on its first write (migrations, at start): say so at once.
 * A replica reader may run on a primary too (a read-only instance); it never writes either way.
 */
async function checkRole(client: pg.Client, role: LogRole, url: URL): Promise<void> {
  // A database without the function (an unusual build) is taken for a primary.
  const { rows } = await client
    .query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')
    .catch(() => ({ rows: [] as { standby: boolean }[] }));
  if (rows[0]?.standby && role === 'primary') {
    throw new DatabaseUnreachableError(
      `PostgreSQL at ${describe(url)} is a read-only standby: point DATABASE_URL at the primary, or set ORDINAL_ROLE=replica-reader to serve reads from this replica (docs/scaling.md)`,
    );
  }
}

async function createDatabase(
  databaseUrl: string,
  database: string,
  hint: string,
  url: URL,
): Promise<{ created: boolean }> {
  if (!/^[A-Za-z0-9_]+$/.test(database)) {
    throw new DatabaseUnreachableError(
      `Database '${database}' does not exist and its name is not one Ordinal creates; create it yourself`,
    );
  }
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({
    connectionString: maintenance.toString(),
    connectionTimeoutMillis: 5000,
  });
  try {
    await admin.connect();
    // An identifier cannot be a parameter; the name was checked against [A-Za-z0-9_] above.
    await admin.query(`CREATE DATABASE "${database}"`);
    return { created: true };
  } catch (error) {
    const e = error as { code?: string; message: string };
    if (e.code === '42P04') return { created: false }; // created meanwhile by another process
    throw new DatabaseUnreachableError(
      `Database ${describe(url)} does not exist and could not be created (${e.message}): ${hint}`,
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
}
