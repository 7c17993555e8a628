import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/** The primary: the server of DATABASE_URL (the local one by default), as the suites and benchmarks use. */
const serverUrl = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A PostgreSQL streaming replica of the suite's server, on this machine: a second cluster on
 * a free port, made by `pg_basebackup` from the primary and kept up to date by streaming
 * replication (hot standby, read-only). `stop()` stops it and removes its data folder.
 * Shared by test/e2e/replica-reader.e2e-spec.ts and `npm run bench:replica`.
 */
export interface StreamingReplica {
  port: number;
  /** Its name on the primary (`application_name` in pg_stat_replication, what synchronous_standby_names lists). */
  name: string;
  /** The replica's URL for `database` (the same database as on the primary). */
  url(database: string): string;
  /** Waits until the replica has replayed everything the primary had written when called. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** Runs SQL on the replica's copy of `database`. */
  query<R extends pg.QueryResultRow = Record<string, unknown>>(
    database: string,
    text: string,
    values?: unknown[],
  ): Promise<R[]>;
  stop(): Promise<void>;
}

/** The settings a hot standby must have at least as high as its primary's. */
const AT_LEAST_PRIMARY = [
  'max_connections',
  'max_worker_processes',
  'max_wal_senders',
  'max_prepared_transactions',
  'max_locks_per_transaction',
];

async function onServer<T>(
  fn: (client: pg.Client) => Promise<T>,
  primaryUrl = serverUrl(),
): Promise<T> {
  const url = new URL(primaryUrl);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL refuses to run as root: as root, the cluster's tools run as the owner of the
 * primary's data (postgres); otherwise as ourselves.
 */
function asClusterUser(
  owner: string | null,
): (bin: string, args: string[]) => Promise<{ stdout: string; stderr: string }> {
  return (bin, args) =>
    owner ? run('runuser', ['-u', owner, '--', bin, ...args]) : run(bin, args);
}

/**
 * The host's pg_hba.conf as it was before this process added its replication line, and how
 * many of this process's replicas still need the line: the last one to stop puts the file back.
 */
let hbaChange: { file: string; original: string; users: number } | null = null;

/**
 * The primary must accept replication connections from 127.0.0.1: when its pg_hba.conf does
 * not allow them (CI runs on a clean machine whose pg_hba.conf has only `host all all
 * 127.0.0.1/32 trust`), adds `host replication all 127.0.0.1/32 trust` and reloads it.
 * Resolves with what undoes that: the host's file is left as it was found once the last
 * replica of this process stops.
 */
async function allowLocalReplication(
  client: pg.Client,
  primaryUrl: string,
): Promise<() => Promise<void>> {
  const allowed = async () =>
    (
      await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_hba_file_rules WHERE 'replication' = ANY(database) AND auth_method = 'trust'
           AND (address IS NULL OR address = '127.0.0.1' OR type = 'local') AND type IN ('host', 'local') AND error IS NULL`,
      )
    ).rows[0].n > 0;
  const [{ hba_file: file }] = (await client.query<{ hba_file: string }>('SHOW hba_file')).rows;
  if (hbaChange) hbaChange.users += 1;
  else if (!(await allowed())) {
    const original = readFileSync(file, 'utf8');
    appendFileSync(
      file,
      '\n# added by test/bench/support/streaming-replica.ts while a replica runs (removed when it stops)\nhost replication all 127.0.0.1/32 trust\n',
    );
    hbaChange = { file, original, users: 1 };
  }
  await client.query('SELECT pg_reload_conf()');
  const change = hbaChange;
  let undone = false;
  return async () => {
    if (!change || undone) return;
    undone = true;
    change.users -= 1;
    if (change.users > 0) return;
    writeFileSync(change.file, change.original);
    hbaChange = null;
    await onServer((c) => c.query('SELECT pg_reload_conf()'), primaryUrl).catch(() => undefined);
  };
}

/**
 * Makes and starts the replica, and resolves once it streams. Runs the cluster's tools as the
 * primary's data owner when run as root (a clean CI machine runs as root), else as ourselves.
 */
export async function startStreamingReplica(
  options: { primaryUrl?: string; fsync?: boolean } = {},
): Promise<StreamingReplica> {
  const primaryUrl = options.primaryUrl ?? serverUrl();
  const primary = new URL(primaryUrl);
  const onPrimary = <T>(fn: (client: pg.Client) => Promise<T>) => onServer(fn, primaryUrl);
  let restoreHba: () => Promise<void> = () => Promise.resolve();
  const { bin, settings, owner } = await onPrimary(async (client) => {
    restoreHba = await allowLocalReplication(client, primaryUrl);
    const [{ v }] = (
      await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")
    ).rows;
    const [{ data_directory: dataDirectory }] = (
      await client.query<{ data_directory: string }>('SHOW data_directory')
    ).rows;
    const rows = (
      await client.query<{ name: string; setting: string }>(
        'SELECT name, setting FROM pg_settings WHERE name = ANY($1)',
        [AT_LEAST_PRIMARY],
      )
    ).rows;
    let owner: string | null = null;
    if (process.getuid?.() === 0) {
      const uid = statSync(dataDirectory).uid;
      owner = (await run('id', ['-nu', String(uid)])).stdout.trim();
    }
    return {
      bin: `/usr/lib/postgresql/${Math.floor(Number(v) / 10000)}/bin`,
      settings: rows,
      owner,
    };
  });
  const tool = asClusterUser(owner);
  let port = 0;
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-replica-'));
  const data = join(dir, 'data');
  // The pid says whose it is: a slot whose process is gone was left by a killed run.
  const name = `${SLOT_PREFIX}${process.pid}_${randomBytes(4).toString('hex')}`;
  const ownerIds = owner ? await ids(owner) : null;
  if (ownerIds) chownSync(dir, ownerIds.uid, ownerIds.gid);
  const stop = async () => {
    await tool(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(
      () => undefined,
    );
    rmSync(dir, { recursive: true, force: true });
    // A slot left behind would keep the primary's WAL forever.
    await dropSlot(name, primaryUrl);
    await restoreHba();
  };
  try {
    // A physical replication slot (created by pg_basebackup, named in the replica's settings by -R)
    // keeps the primary's WAL from the backup on: busy neighbours on the primary could otherwise
    // recycle a segment before the replica starts streaming ("requested WAL segment … has
    // already been removed").
    await dropStaleSlots(primaryUrl);
    await tool(join(bin, 'pg_basebackup'), [
      '-h',
      primary.hostname,
      '-p',
      primary.port || '5432',
      '-U',
      primary.username || 'postgres',
      '-D',
      data,
      '-X',
      'stream',
      '-R',
      '-c',
      'fast',
      '-C',
      '-S',
      name,
    ]);
    const conf = [
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      `cluster_name = '${name}'`,
      'hot_standby = on',
      'shared_buffers = 32MB',
      `fsync = ${options.fsync ? 'on' : 'off'}`,
      ...settings.map((s) => `${s.name} = ${s.setting}`),
    ];
    writeFileSync(join(data, 'postgresql.conf'), conf.join('\n') + '\n');
    writeFileSync(
      join(data, 'pg_hba.conf'),
      'local all all trust\nhost all all 127.0.0.1/32 trust\n',
    );
    writeFileSync(join(data, 'pg_ident.conf'), '');
    if (ownerIds)
      for (const f of ['postgresql.conf', 'pg_hba.conf', 'pg_ident.conf'])
        chownSync(join(data, f), ownerIds.uid, ownerIds.gid);
    port = await startOnFreePort(tool, bin, data, dir);
    // Streaming: the primary sees the replica's WAL receiver (named after cluster_name).
    await waitFor(
      () =>
        onPrimary(
          async (c) =>
            (
              await c.query(
                `SELECT 1 FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'`,
                [name],
              )
            ).rows.length > 0,
        ),
      20_000,
      'the replica to stream from the primary',
    );
  } catch (error) {
    throw await failedStart(error, dir, 'replica', stop);
  }
  const url = (database: string) =>
    `postgres://${primary.username || 'postgres'}@127.0.0.1:${port}/${database}`;
  const query = async <R extends pg.QueryResultRow>(
    database: string,
    text: string,
    values?: unknown[],
  ) => {
    const client = new pg.Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    port,
    name,
    url,
    query,
    async caughtUp(timeoutMs = 10_000) {
      const lsn = await onPrimary(
        async (c) =>
          (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn,
      );
      await waitFor(
        async () =>
          (
            await query<{ ok: boolean }>(
              'postgres',
              'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok',
              [lsn],
            )
          )[0].ok,
        timeoutMs,
        `the replica to replay up to ${lsn}`,
      );
    },
    stop,
  };
}

const SLOT_PREFIX = 'ordinal_test_replica_';

/** Drops this replica's slot once its WAL receiver has gone (the walsender exits a moment after the replica stops). */
async function dropSlot(slot: string, primaryUrl: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const left = await onServer(async (c) => {
      const { rows } = await c.query<{ active: boolean }>(
        'SELECT active FROM pg_replication_slots WHERE slot_name = $1',
        [slot],
      );
      if (rows.length === 0) return false;
      if (!rows[0].active)
        await c.query('SELECT pg_drop_replication_slot($1)', [slot]).catch(() => undefined);
      return true;
    }, primaryUrl).catch(() => true);
    if (!left) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Slots of earlier runs on this machine that were killed before they could clean up (their process is gone). */
async function dropStaleSlots(primaryUrl: string): Promise<void> {
  await onServer(async (c) => {
    const { rows } = await c.query<{ slot_name: string }>(
      `SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE $1 AND NOT active`,
      [`${SLOT_PREFIX}%`],
    );
    for (const { slot_name: slot } of rows) {
      const pid = Number(slot.slice(SLOT_PREFIX.length).split('_')[0]);
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) continue;
      await c.query('SELECT pg_drop_replication_slot($1)', [slot]).catch(() => undefined);
    }
  }, primaryUrl);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function ids(user: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A PostgreSQL cluster of this benchmark's own (another port, a temporary folder), for settings the shared cluster must not get. */
export interface LocalCluster {
  port: number;
  /** The URL of `database` on it (`postgres` by default). */
  url(database?: string): string;
  stop(): Promise<void>;
}

/**
 * Makes (initdb) and starts a cluster of its own with the machine's PostgreSQL binaries — the
 * version of the server of DATABASE_URL — as a primary that accepts streaming replicas from
 * 127.0.0.1 (`startStreamingReplica({ primaryUrl })`), with `settings` added to its
 * postgresql.conf. As root, the tools run as the owner of the shared cluster's data (postgres).
 */
export async function startLocalCluster(settings: string[] = []): Promise<LocalCluster> {
  const { bin, owner } = await onServer(async (client) => {
    const [{ v }] = (
      await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")
    ).rows;
    const [{ data_directory: dataDirectory }] = (
      await client.query<{ data_directory: string }>('SHOW data_directory')
    ).rows;
    const owner =
      process.getuid?.() === 0
        ? (await run('id', ['-nu', String(statSync(dataDirectory).uid)])).stdout.trim()
        : null;
    return { bin: `/usr/lib/postgresql/${Math.floor(Number(v) / 10000)}/bin`, owner };
  });
  const tool = asClusterUser(owner);
  let port = 0;
  const dir = mkdtempSync(join(tmpdir(), 'ordinal-cluster-'));
  const data = join(dir, 'data');
  const ownerIds = owner ? await ids(owner) : null;
  if (ownerIds) chownSync(dir, ownerIds.uid, ownerIds.gid);
  const stop = async () => {
    await tool(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']).catch(
      () => undefined,
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await tool(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '--no-instructions',
    ]);
    const conf = [
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'shared_buffers = 128MB',
      ...settings,
    ];
    appendFileSync(join(data, 'postgresql.conf'), '\n' + conf.join('\n') + '\n');
    writeFileSync(
      join(data, 'pg_hba.conf'),
      'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
    );
    if (ownerIds) chownSync(join(data, 'pg_hba.conf'), ownerIds.uid, ownerIds.gid);
    port = await startOnFreePort(tool, bin, data, dir);
  } catch (error) {
    throw await failedStart(error, dir, 'cluster', stop);
  }
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop,
  };
}

/** A cluster that failed to start: stopped and removed, and the error says why from its own log's last lines (removed with its folder). */
async function failedStart(
  error: unknown,
  dir: string,
  what: string,
  stop: () => Promise<void>,
): Promise<Error> {
  let log = '';
  try {
    log = readFileSync(join(dir, 'log'), 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    // no log yet (initdb or pg_basebackup failed)
  }
  await stop();
  return new Error(
    `${(error as Error).message}${log ? `\n${what} log (last lines):\n${log}` : ''}`,
    { cause: error },
  );
}

/**
 * Starts the cluster in `data` on a port that is free when it binds: a port found free can be
 * taken by another process before PostgreSQL binds it, so a start that could not bind tries
 * again on another (the port is given on the command line, not in the files).
 */
async function startOnFreePort(
  tool: (file: string, args: string[]) => Promise<unknown>,
  bin: string,
  data: string,
  dir: string,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      await tool(join(bin, 'pg_ctl'), [
        '-D',
        data,
        '-l',
        join(dir, 'log'),
        '-o',
        `-p ${port}`,
        '-w',
        '-t',
        '30',
        'start',
      ]);
      return port;
    } catch (error) {
      let log = '';
      try {
        log = readFileSync(join(dir, 'log'), 'utf8');
      } catch {
        // no log: the start failed before PostgreSQL wrote one
      }
      if (attempt >= 3 || !/could not bind|already in use/i.test(log)) throw error;
    }
  }
}
