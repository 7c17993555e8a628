/**
 * `npm run bench:commit-latency`: the two ordering modes when a commit takes longer than a
 * local fsync — the case concurrent mode exists for. A PostgreSQL cluster of the benchmark's
 * own (another port; the shared one's settings are not touched) with a streaming replica of
 * it, first asynchronous (`synchronous_standby_names` empty: a commit waits for the local WAL
 * flush only) and then synchronous (it waits for the standby to flush it too, fsync on there,
 * as a high-availability setup runs). In each setting, an Ordinal server per mode in its own
 * process with its default settings, and wrk with BENCH_CLIENTS keep-alive clients (default
 * 32) PUTting single messages for BENCH_SECONDS (5) per phase, BENCH_ROUNDS (3) rounds
 * rotating which mode goes first; the ratio is the median of the same-round ratios. Beside
 * it, the commit time a bare `pg` client sees (median of 200 one-row autocommit INSERTs).
 * Prints JSON. Needs wrk (/usr/bin/wrk).
 */
import pg from 'pg';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './support/free-port.js';
import { startChild, type ChildServer } from './support/child-server.js';
import {
  startLocalCluster,
  startStreamingReplica,
  type LocalCluster,
  type StreamingReplica,
} from './support/streaming-replica.js';
import { hasWrk, runWrk } from './support/wrk-load.js';

const here = dirname(fileURLToPath(import.meta.url));
const serverMain = join(here, '..', '..', '..', 'apps', 'eventstore', 'dist', 'main.js');
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const MODES = ['gapless', 'concurrent'] as const;
const headers = { authorization: 'Bearer dev-ordinal-token' };

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round2 = (x: number) => Number(x.toFixed(2));

async function onCluster<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Makes the standby synchronous (or not) and waits until the primary says so. */
async function setSynchronous(
  cluster: LocalCluster,
  replica: StreamingReplica,
  on: boolean,
): Promise<void> {
  await onCluster(cluster.url(), async (c) => {
    // ALTER SYSTEM takes no parameters; the name is the replica's own (digits, letters, underscores).
    if (!/^\w+$/.test(replica.name)) throw new Error(`unexpected replica name ${replica.name}`);
    await c.query(
      on
        ? `ALTER SYSTEM SET synchronous_standby_names = '"${replica.name}"'`
        : 'ALTER SYSTEM RESET synchronous_standby_names',
    );
    await c.query('SELECT pg_reload_conf()');
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await c.query<{ sync_state: string }>(
        'SELECT sync_state FROM pg_stat_replication WHERE application_name = $1',
        [replica.name],
      );
      if (rows[0]?.sync_state === (on ? 'sync' : 'async')) return;
      if (Date.now() > deadline)
        throw new Error(
          `the standby did not become ${on ? 'sync' : 'async'} (${rows[0]?.sync_state})`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}

/** The median time of a one-row autocommit INSERT, as a bare client sees it (ms). */
async function commitMs(url: string): Promise<number> {
  return onCluster(url, async (c) => {
    await c.query('CREATE TABLE IF NOT EXISTS commit_probe (n int)');
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      await c.query('INSERT INTO commit_probe VALUES ($1)', [i]);
      times.push(performance.now() - started);
    }
    await c.query('DROP TABLE commit_probe');
    return Number(median(times).toFixed(3));
  });
}

function put(server: ChildServer, seconds: number, prefix: string) {
  return runWrk({
    url: `${server.baseUrl}/api/events/message`,
    clients: CLIENTS,
    seconds,
    headers,
    bodyPrefix: prefix,
  });
}

async function main(): Promise<void> {
  if (!hasWrk()) throw new Error('bench:commit-latency needs wrk (/usr/bin/wrk)');
  const cluster = await startLocalCluster();
  let replica: StreamingReplica | null = null;
  const servers: ChildServer[] = [];
  try {
    replica = await startStreamingReplica({ primaryUrl: cluster.url(), fsync: true });
    await onCluster(cluster.url(), async (c) => {
      for (const mode of MODES) await c.query(`CREATE DATABASE bench_${mode}`);
    });
    for (const mode of MODES) {
      servers.push(
        await startChild(
          serverMain,
          {
            DATABASE_URL: cluster.url(`bench_${mode}`),
            ORDINAL_LOG_FORMAT: 'json',
            ORDINAL_ORDERING: mode,
          },
          await freePort(),
          /listening on/,
        ),
      );
    }
    const settings: Record<string, unknown> = {};
    for (const synchronous of [false, true]) {
      await setSynchronous(cluster, replica, synchronous);
      // Past the duplicate window's first 2,000 messages, and warm.
      for (const [i, server] of servers.entries()) put(server, 2, `warm-${synchronous}-${i}`);
      const runs: Record<string, number[]> = { gapless: [], concurrent: [] };
      const ratios: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        const got: Record<string, number> = {};
        for (const i of order)
          got[MODES[i]] = put(servers[i], SECONDS, `r${round}-${synchronous}-${i}`).msgPerSec;
        for (const mode of MODES) runs[mode].push(got[mode]);
        ratios.push(got.concurrent / got.gapless);
      }
      settings[synchronous ? 'synchronousStandby' : 'localCommit'] = {
        commitMs: await commitMs(cluster.url()),
        msgPerSec: { gapless: median(runs.gapless), concurrent: median(runs.concurrent) },
        runsMsgPerSec: runs,
        concurrentOverGapless: round2(median(ratios)),
        concurrentOverGaplessByRound: ratios.map(round2),
      };
    }
    console.log(
      JSON.stringify(
        {
          benchmark: 'commit-latency',
          clients: CLIENTS,
          secondsPerPhase: SECONDS,
          rounds: ROUNDS,
          route: 'PUT /api/events/message',
          settings,
        },
        null,
        2,
      ),
    );
  } finally {
    for (const server of servers) await server.stop();
    await replica?.stop();
    await cluster.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
