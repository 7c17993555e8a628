/**
 * The delay proxy in a process of its own (a benchmark's own process blocks on wrk, and a
 * proxy sharing an event loop with a load generator would add its own delay): started with
 * `forkDelayProxy`, steered over the IPC channel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startDelayProxy, type DelayProxyStats, type DelaySettings } from './delay-proxy.js';

type Ask =
  { kind: 'setDelay'; settings: DelaySettings } | { kind: 'stats' } | { kind: 'resetStats' };
type Request = Ask & { id: number };

/** A delay proxy in another process. */
export interface ForkedDelayProxy {
  port: number;
  pid: number;
  setDelay(settings: DelaySettings): Promise<void>;
  stats(): Promise<DelayProxyStats>;
  resetStats(): Promise<void>;
  close(): Promise<void>;
}

const self = fileURLToPath(import.meta.url);

export async function forkDelayProxy(
  upstream: { host: string; port: number },
  initial: DelaySettings = { delayMs: 0 },
): Promise<ForkedDelayProxy> {
  const child: ChildProcess = fork(self, [JSON.stringify({ upstream, initial })], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`delay proxy exited with ${code}`)));
  });
  let next = 0;
  const pending = new Map<number, (value: unknown) => void>();
  child.on('message', (m) => {
    const { id, value } = m as { id: number; value: unknown };
    pending.get(id)?.(value);
    pending.delete(id);
  });
  const ask = <T>(request: Ask) =>
    new Promise<T>((resolve) => {
      const id = ++next;
      pending.set(id, resolve as (value: unknown) => void);
      child.send({ ...request, id });
    });
  return {
    port,
    pid: child.pid!,
    setDelay: (settings) => ask<void>({ kind: 'setDelay', settings }),
    stats: () => ask<DelayProxyStats>({ kind: 'stats' }),
    resetStats: () => ask<void>({ kind: 'resetStats' }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

// Run as the proxy process itself.
if (process.argv[1] === self && process.send) {
  const { upstream, initial } = JSON.parse(process.argv[2]) as {
    upstream: { host: string; port: number };
    initial: DelaySettings;
  };
  const proxy = await startDelayProxy(upstream, initial);
  process.on('message', (m: Request) => {
    let value: unknown = null;
    if (m.kind === 'setDelay') proxy.setDelay(m.settings);
    else if (m.kind === 'stats') value = proxy.stats();
    else proxy.resetStats();
    process.send!({ id: m.id, value });
  });
  process.on('disconnect', () => void proxy.close().then(() => process.exit(0)));
  process.on('SIGTERM', () => void proxy.close().then(() => process.exit(0)));
  process.send({ port: proxy.port });
}
