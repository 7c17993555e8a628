import pg from 'pg';

/** PostgreSQL cannot be reached at start: the message is one line saying what to do. */
export class DatabaseUnreachableError extends Error {}

function describe(url: URL): string {
  return `${url.hostname}:${url.port || 5432}/${decodeURIComponent(url.pathname.slice(1))}`;
}

/**
 * Checks that the database answers before the server starts, so an outage is one clear
 * line instead of a stack trace; in development creates the database when it is missing.
 */
export async function prepareDatabase(databaseUrl: string, createIfMissing: boolean): Promise<{ created: boolean }> {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  const hint = 'set DATABASE_URL to a reachable PostgreSQL, or start one with: docker compose -f docker/compose.yml up -d';
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    return { created: false };
  } catch (error) {
    const e = error as { code?: string; message: string };
    if (e.code !== '3D000' || !createIfMissing) {
      throw new DatabaseUnreachableError(`Cannot reach PostgreSQL at ${describe(url)} (${e.code ?? e.message}): ${hint}`);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  if (!/^[A-Za-z0-9_]+$/.test(database)) {
    throw new DatabaseUnreachableError(`Database '${database}' does not exist and its name is not one Ordinal creates; create it yourself`);
  }
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
    // An identifier cannot be a parameter; the name was checked against [A-Za-z0-9_] above.
    await admin.query(`CREATE DATABASE "${database}"`);
    return { created: true };
  } catch (error) {
    const e = error as { code?: string; message: string };
    if (e.code === '42P04') return { created: false }; // created meanwhile by another process
    throw new DatabaseUnreachableError(`Database ${describe(url)} does not exist and could not be created (${e.message}): ${hint}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
}
