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
  /** Resolves once a line matching `pattern` was printed; rejects after `timeoutMs`, or once the process exited without it. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM (graceful), or the given signal; resolves on exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
}

/**
 * The port a spawned server says it listens on (start it with PORT=0: the system picks a free
 * one and the server binds it at once, so no other process can take it in between).
 */
export async function listeningPort(server: ServerProcess, timeoutMs?: number): Promise<number> {
  const line = await server.waitForOutput(/listening on http:\/\/localhost:\d+/, timeoutMs);
  return Number(/:(\d+)$/.exec(line)![1]);
}

export function spawnServer(env: Record<string, string>): ServerProcess {
  // AMQP stays off unless a suite passes AMQP_URL (development would default it to the local broker).
  return spawnScript(SERVER_MAIN, { ORDINAL_LOG_FORMAT: 'text', AMQP_URL: '', ...env });
}

/** A built script of the repo in its own process, its output collected (servers, workers). */
export function spawnScript(
  script: string,
  env: Record<string, string>,
  outputTimeoutMs = 20_000,
): ServerProcess {
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
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  // 'close' comes after the last output: a waiter still unmatched then never will be.
  let closed = false;
  child.once('close', () => {
    closed = true;
    for (const w of waiters) w();
  });
  return {
    child,
    output: () => text,
    exited,
    waitForOutput(pattern, timeoutMs = outputTimeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(text);
          if (m || closed) {
            waiters.delete(check);
            clearTimeout(timer);
            if (m) resolve(m[0]);
            else
              reject(
                new Error(
                  `The process exited (${child.exitCode ?? child.signalCode}) without output matching ${pattern}; output was:\n${text}`,
                ),
              );
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`No output matching ${pattern} within ${timeoutMs} ms; output was:\n${text}`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        // A stopped (SIGSTOP) process must run again to handle the signal.
        if (signal !== 'SIGKILL') child.kill('SIGCONT');
        child.kill(signal);
      }
      return exited;
    },
  };
}
