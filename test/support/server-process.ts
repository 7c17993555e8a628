import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built server (`npm test` runs `tsc -b` first). */
export const SERVER_MAIN = join(root, 'apps', 'eventstore', 'dist', 'main.js');

/** A server in its own process, as `npm run start:prod` runs it. */
export interface ServerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code, or the signal's name when a signal ended it. */
  exited: Promise<number | string | null>;
  /** Resolves once a line matching `pattern` was printed. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<number | string | null>;
}

export function spawnServer(env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: root,
    // AMQP stays off unless a suite passes AMQP_URL (development would default it to the local broker).
    env: { PATH: process.env.PATH ?? '', ORDINAL_LOG_FORMAT: 'text', AMQP_URL: '', ...env },
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
  return {
    child,
    output: () => text,
    exited,
    waitForOutput(pattern, timeoutMs = 20_000) {
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
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
