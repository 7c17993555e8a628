import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** What a replica answered: its result, or the error it threw (name, code, and a conflict's fields). */
export type ReplicaAnswer =
  | { ok: true; result: unknown }
  | {
      ok: false;
      error: { name: string; code: string | null; message: string; [field: string]: unknown };
    };

/** One replica of the installed sample service (`node dist/check.js replica`), driven over stdin. */
export interface Replica {
  pid: number;
  child: ChildProcess;
  /** Every mail its Mailer sent, in order. */
  mails: string[];
  /** Sends a command; resolves with the answer (an error is an answer too). */
  ask(cmd: string, args?: Record<string, unknown>): Promise<ReplicaAnswer>;
  /** As `ask`, rejecting when the command failed. */
  call(cmd: string, args?: Record<string, unknown>): Promise<unknown>;
  /** Resolves with the exit code or signal, once its output is read to the end. */
  exited: Promise<number | string | null>;
  output(): string;
}

/** Starts a replica in `cwd` and resolves once it is up (its migrations ran, its consumers registered). */
export async function startReplica(
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<Replica> {
  const child = spawn(process.execPath, ['dist/check.js', 'replica'], {
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let text = '';
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // 'close', not 'exit': by then its stdout is read to the end (no mail line still in the pipe)
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal)),
  );
  const pending = new Map<number, (answer: ReplicaAnswer) => void>();
  const mails: string[] = [];
  let nextId = 1;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`replica not up within ${timeoutMs} ms:\n${text}`)),
      timeoutMs,
    );
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`replica exited with ${code} before it was up:\n${text}`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      text += `${line}\n`;
      if (!line.startsWith('{')) return;
      const message = JSON.parse(line) as {
        ready?: boolean;
        mail?: string;
        id?: number;
      } & ReplicaAnswer;
      if (message.ready) {
        clearTimeout(timer);
        resolve();
      } else if (message.mail !== undefined) mails.push(message.mail);
      else if (message.id !== undefined) {
        pending.get(message.id)?.(message);
        pending.delete(message.id);
      }
    });
  });
  const ask = (cmd: string, args: Record<string, unknown> = {}) =>
    new Promise<ReplicaAnswer>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, resolve);
      void exited.then((code) =>
        reject(
          new Error(`replica ${child.pid} exited with ${code} before answering ${cmd}:\n${text}`),
        ),
      );
      child.stdin.write(`${JSON.stringify({ id, cmd, ...args })}\n`);
    });
  await ready;
  return {
    pid: child.pid!,
    child,
    mails,
    ask,
    async call(cmd, args) {
      const answer = await ask(cmd, args);
      if (!answer.ok)
        throw new Error(`${cmd} failed in replica ${child.pid}: ${JSON.stringify(answer.error)}`);
      return answer.result;
    },
    exited,
    output: () => text,
  };
}

/** Polls `probe` until it returns something truthy; rejects naming `what` after `timeoutMs`. */
export async function pollUntil<T>(
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  what: string,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
