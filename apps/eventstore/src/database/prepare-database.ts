import pg from 'pg';
import type { LogRole } from '@ordinal/log';
import { createDatabase, DatabaseMissingError, maskCredentials } from '@ordinal/pg';

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
    await client.end().catch(() => undefined);
    const e = error as { code?: string; message: string };
    const where = `${url.hostname}:${url.port || 5432}`;
    if (e.code === '3D000' && createIfMissing) {
      try {
        return await createDatabase({ connectionString: databaseUrl, database }, where);
      } catch (failure) {
        if (failure instanceof DatabaseMissingError)
          throw new DatabaseUnreachableError(failure.message);
        throw failure;
      }
    }
    throw new DatabaseUnreachableError(maskCredentials(refusal(e, url, database, hint)));
  }
  try {
    await checkRole(client, role, url);
    return { created: false };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Why the first connection failed, and what to do, for the start's one line. */
function refusal(
  e: { code?: string; message: string },
  url: URL,
  database: string,
  hint: string,
): string {
  const where = `${url.hostname}:${url.port || 5432}`;
  if (e.code === '3D000')
    return `Database '${database}' does not exist on PostgreSQL at ${where} (SQLSTATE 3D000): create it (CREATE DATABASE ${database}), or point DATABASE_URL at an existing one (development creates the database itself)`;
  if (e.code === '28P01' || e.code === '28000')
    return `PostgreSQL at ${where} refused user '${decodeURIComponent(url.username) || 'postgres'}' (SQLSTATE ${e.code}: ${e.message}): check the user and password (DATABASE_URL, or PGPASSWORD)`;
  return `Cannot reach PostgreSQL at ${describe(url)} (${e.code ?? e.message}): ${hint}`;
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
