import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ordinal-process.js';
import { serverUrl } from './test-database.js';

/** Where Debian installs it (`apt-get install pgbouncer`; .ci/run does). */
export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

/** A PgBouncer of its own in front of the local PostgreSQL, in transaction mode. */
export interface PgBouncer {
  port: number;
  /** The URL of `database` through the pooler. */
  url(database: string): string;
  /** `SHOW <what>` on its admin console (CLIENTS, POOLS, …). */
  show<T>(what: string): Promise<T[]>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `/usr/sbin/pgbouncer` with its own ini in a temporary folder: a random port,
 * `pool_mode = transaction`, trust authentication towards its clients, every database
 * forwarded to the suites' server (DATABASE_URL, as test/support/global-setup.mjs resolved
 * it) as its user. Throws (it never skips) with what went wrong when it cannot start.
 *
 * PgBouncer cannot bind port 0 and say which port it got: it is given a free port, and when
 * another process took that port in between, it starts again on another (three tries).
 */
export async function startPgBouncer(): Promise<PgBouncer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort());
    } catch (error) {
      if (attempt >= 3 || !/already in use|EADDRINUSE/i.test((error as Error).message)) throw error;
    }
  }
}

async function startOn(port: number): Promise<PgBouncer> {
  const server = new URL(serverUrl());
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-pgbouncer-'));
  const ini = join(dir, 'pgbouncer.ini');
  const users = join(dir, 'userlist.txt');
  writeFileSync(users, `"${user}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432} user=${user}${password ? ` password=${password}` : ''}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${users}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 20',
      'server_reset_query =',
      'ignore_startup_parameters = extra_float_digits',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: it drops to the postgres user (-u), which must read its files.
  chmodSync(dir, 0o755);
  chmodSync(ini, 0o644);
  chmodSync(users, 0o644);
  const asRoot = process.getuid?.() === 0;
  let child: ChildProcess;
  try {
    child = spawn(PGBOUNCER_BIN, [...(asRoot ? ['-u', 'postgres'] : []), ini], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    throw new Error(
      `PgBouncer could not be started (${PGBOUNCER_BIN}): ${(error as Error).message}; install it (apt-get install pgbouncer) or set PGBOUNCER_BIN`,
      { cause: error },
    );
  }
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) =>
      reject(
        new Error(
          `PgBouncer could not be started (${PGBOUNCER_BIN}): ${error.message}; install it (apt-get install pgbouncer) or set PGBOUNCER_BIN`,
        ),
      ),
    );
    child.once('exit', (code, signal) =>
      reject(
        new Error(`PgBouncer exited (${code ?? signal}) before accepting connections:\n${text}`),
      ),
    );
  });
  const url = (database: string) =>
    `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  const ready = (async () => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const client = new pg.Client({ connectionString: url('postgres') });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(
            `PgBouncer did not accept connections on port ${port} within 15 s: ${(error as Error).message}\n${text}`,
            { cause: error },
          );
      } finally {
        await client.end().catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.race([ready, failed]);
  failed.catch(() => undefined);
  return {
    port,
    url,
    output: () => text,
    async show<T>(what: string) {
      const client = new pg.Client({ connectionString: url('pgbouncer') });
      await client.connect();
      try {
        // The admin console speaks the simple protocol only.
        return (await client.query({ text: `SHOW ${what}`, queryMode: 'simple' } as pg.QueryConfig))
          .rows as T[];
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5000)))]);
        clearTimeout(timer);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
