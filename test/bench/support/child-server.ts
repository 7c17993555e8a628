import { spawn, type ChildProcess } from 'node:child_process';

/** A server in its own process, so the load generator does not share its event loop. */
export interface ChildServer {
  child: ChildProcess;
  baseUrl: string;
  stop(): Promise<void>;
}

/** `nodeArgs` go before the script (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
export async function startChild(
  script: string,
  env: Record<string, string>,
  port: number,
  ready: RegExp,
  nodeArgs: string[] = [],
): Promise<ChildServer> {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${output}`)));
  });
  return {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Runs every migration of Ordinal's built server (`serverMain`) on `databaseUrl` and returns
 * once it has exited (`ORDINAL_MIGRATIONS=only`): the schema a baseline that writes Ordinal's
 * tables (the bare route, the seed baseline) writes to.
 */
export async function migrateWith(serverMain: string, databaseUrl: string): Promise<void> {
  const child = spawn(process.execPath, [serverMain], {
    env: { ...process.env, DATABASE_URL: databaseUrl, ORDINAL_MIGRATIONS: 'only' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0)
    throw new Error(`${serverMain} (ORDINAL_MIGRATIONS=only) exited ${code}: ${output}`);
}
