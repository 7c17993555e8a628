import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built `ordinal` command (`npm test` runs `tsc -b` first). */
export const CLI_MAIN = join(root, 'src', 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `ordinal <args>` as a process with only PATH and `env`; resolves when it exits (never rejects on a failure code). */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_MAIN, ...args],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', ...env },
        timeout: timeoutMs,
        maxBuffer: 32 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error
          ? typeof (error as { code?: unknown }).code === 'number'
            ? (error as { code: number }).code
            : null
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A long-running `ordinal` (tail): its output so far and its exit. */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/**
 * Starts `ordinal <args>`. `stdoutClosed`: its stdout is a pipe whose reading end is closed
 * before it starts (`ordinal … | head` once head has exited): every write gets EPIPE.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  { stdoutClosed = false }: { stdoutClosed?: boolean } = {},
): CliProcess {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  // (destroy closes the reading end at once; the child writes only after it started up)
  if (stdoutClosed) child.stdout.destroy();
  else child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
}
