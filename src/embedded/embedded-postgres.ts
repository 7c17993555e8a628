import { mkdirSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { OrdinalError } from '@ordinal/pg';
import { lockDataFolder, type DataFolderLock } from './data-folder-lock.js';
import { describeFreeSpace, hasFreeSpace } from './free-space.js';
import { FullDiskGuard } from './full-disk-guard.js';

/** Options of `startEmbeddedPostgres`. */
export interface EmbeddedPostgresOptions {
  /**
   * Where the data lives (created if missing, kept across restarts); omit for an in-memory
   * database. One process at a time: the folder is locked while it runs, and a second start on
   * it fails naming the process that holds it.
   */
  dataDir?: string;
  /** The TCP port on 127.0.0.1; `0` takes a free one. @default 0 */
  port?: number;
  /**
   * Client connections the socket accepts at once. They share PGlite's one session: their
   * queries run one at a time, and a transaction holds the session until it ends. @default 16
   */
  maxConnections?: number;
}

/** A running embedded PostgreSQL: PGlite served to the normal `pg` driver on a local port. */
export interface EmbeddedPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** The data folder, or null in memory. */
  dataDir: string | null;
  /** Closes the socket and PGlite (which writes its data out). */
  stop(): Promise<void>;
}

/** The embedded database could not start (PGlite not installed, a data folder in use, …). */
export class EmbeddedPostgresError extends OrdinalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('embedded_postgres_unavailable', message, options);
  }
}

/** The versions known to work together (pglite-socket pins its PGlite). */
export const EMBEDDED_PACKAGES = '@electric-sql/pglite@0.5.14 @electric-sql/pglite-socket@0.2.17';

/**
 * Starts PGlite (PostgreSQL compiled to WebAssembly, in this process) behind
 * `@electric-sql/pglite-socket`, so Ordinal talks to it through `pg` like to any server.
 * PGlite is one PostgreSQL session: every connection shares it, so session-level state
 * (named prepared statements, advisory locks, `pg_locks`, other backends) does not behave as
 * on a server: give a pool one connection (two would prepare the same statement name in one
 * session and fail). Ordinal's
 * gapless mode is correct on it (one transaction at a time); concurrent mode is not (its
 * watermark reads other sessions' locks), and the server refuses it there.
 *
 * On disk, a database that runs out of space in a way that breaks PGlite (its write-ahead log
 * could not grow) is closed and answered for by `FullDiskGuard` (SQLSTATE 53100 to every
 * query), then reopened once there is room again. A start on a full disk says so.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedPostgres> {
  let modules: [
    typeof import('@electric-sql/pglite'),
    typeof import('@electric-sql/pglite-socket'),
  ];
  try {
    modules = await Promise.all([
      import('@electric-sql/pglite'),
      import('@electric-sql/pglite-socket'),
    ]);
  } catch (error) {
    throw new EmbeddedPostgresError(
      `The embedded database needs ${EMBEDDED_PACKAGES}: npm install --save-exact ${EMBEDDED_PACKAGES}`,
      { cause: error },
    );
  }
  const [{ PGlite }, { PGLiteSocketServer }] = modules;
  const dataDir = options.dataDir ? resolve(options.dataDir) : null;
  const lock = dataDir ? await lockFolder(dataDir) : null;
  const open = () => PGlite.create(dataDir ? { dataDir } : {});
  let db: InstanceType<typeof PGlite>;
  try {
    db = await open();
  } catch (error) {
    await lock?.release();
    throw openFailure(dataDir, error);
  }
  const serve = (database: typeof db, port: number) =>
    new PGLiteSocketServer({
      db: database,
      host: '127.0.0.1',
      port,
      maxConnections: options.maxConnections ?? 16,
    });
  // On disk, PGlite is closed when it runs out of space and reopened once there is room again:
  // a new socket server then, so that no client keeps a session that is gone.
  const guard = dataDir
    ? new FullDiskGuard(db, {
        dataDir,
        open,
        reopened: async () => {
          await server.stop();
          server = serve(guard!.database, port);
          await server.start();
        },
      })
    : null;
  let server = serve(guard?.database ?? db, options.port ?? 0);
  try {
    await server.start();
  } catch (error) {
    await db.close().catch(() => undefined);
    await lock?.release();
    throw new EmbeddedPostgresError(
      `Cannot serve the embedded database on 127.0.0.1:${options.port ?? 0} (${(error as Error).message})`,
      { cause: error },
    );
  }
  const port = Number(server.getServerConn().split(':').pop());
  let stopped: Promise<void> | null = null;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    stop: () =>
      (stopped ??= (async () => {
        await server.stop();
        await (guard ? guard.stop() : db.close());
        await lock?.release();
      })()),
  };
}

/** Why PGlite did not open: a full disk says so (the folder is locked, so no other process is the cause). */
function openFailure(dataDir: string | null, error: unknown): EmbeddedPostgresError {
  const why = (error as Error).message;
  if (dataDir && !hasFreeSpace(dataDir))
    return new EmbeddedPostgresError(
      `The disk holding the embedded database's data folder ${dataDir} is full (${describeFreeSpace(dataDir)}; PGlite says: ${why}): free space there and start again`,
      { cause: error },
    );
  return new EmbeddedPostgresError(
    `Cannot open the embedded database${dataDir ? ` in ${dataDir}` : ''} (${why})`,
    { cause: error },
  );
}

/** Creates `dataDir` if missing and locks it for this process, or fails naming the holder. */
async function lockFolder(dataDir: string): Promise<DataFolderLock> {
  let taken: Awaited<ReturnType<typeof lockDataFolder>>;
  try {
    mkdirSync(dataDir, { recursive: true });
    // The real path: a folder reached through a symbolic link or a relative path is one folder.
    taken = await lockDataFolder(realpathSync(dataDir));
  } catch (error) {
    throw new EmbeddedPostgresError(
      `Cannot lock the embedded database's data folder ${dataDir} (${(error as Error).message})`,
      { cause: error },
    );
  }
  if ('lock' in taken) return taken.lock;
  const who = taken.holder.pid
    ? `process ${taken.holder.pid}`
    : 'another process (it did not say its pid)';
  throw new EmbeddedPostgresError(
    `The embedded database's data folder ${dataDir} is in use by ${who}: stop that process, or give this one another folder (ORDINAL_EMBEDDED_DIR)`,
  );
}
