import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built projection worker (`npm test` runs `tsc -b` first): a user's service with one projection. */
export const PROJECTION_WORKER = join(root, 'test', 'bench', 'dist', 'support', 'projection-worker.js');

/** A projection worker in its own process. */
export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  output(): string;
  exited: Promise<number | string | null>;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM (graceful), or the given signal; resolves on exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
}

/** Starts a worker and resolves once it printed `worker ready`. */
export async function spawnWorker(env: Record<string, string>, script = PROJECTION_WORKER): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const worker: WorkerProcess = {
    child,
    pid: child.pid!,
    output: () => text,
    exited,
    waitForOutput(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(text);
          if (m) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(m[0]);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`No output matching ${pattern} within ${timeoutMs} ms; output was:\n${text}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        if (signal !== 'SIGKILL') child.kill('SIGCONT');
        child.kill(signal);
      }
      return exited;
    },
  };
  await Promise.race([worker.waitForOutput(/worker ready/, 60_000), exited.then((code) => Promise.reject(new Error(`worker exited with ${code}:\n${text}`)))]);
  return worker;
}
