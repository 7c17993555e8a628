import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { spawnScript, type ServerProcess } from './server-process.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built consumer group member (`npm test` runs `tsc -b` first): an external service on @ordinal/client. */
export const GROUP_MEMBER = join(root, 'test', 'bench', 'dist', 'support', 'group-member.js');

/** One event a member's handler started on. */
export interface MemberStart {
  index: number;
  attempt: number;
  key: string;
  at: number;
}

/** A consumer group member process with what it printed, parsed. */
export interface MemberProcess extends ServerProcess {
  pid: number;
  /** Events its handler started on, in the order it printed them. */
  starts(): MemberStart[];
  /** Indices the server counted as acknowledged for it. */
  acked(): number[];
}

/** Starts a member (test/bench/support/group-member.ts) and resolves once it is running. */
export async function spawnMember(env: Record<string, string>): Promise<MemberProcess> {
  const child = spawnScript(GROUP_MEMBER, env, 30_000);
  await child.waitForOutput(/member ready/);
  const lines = (prefix: string) =>
    child
      .output()
      .split('\n')
      .filter((line) => line.startsWith(prefix))
      .map((line) => line.slice(prefix.length).split(' '));
  return Object.assign(child, {
    pid: child.child.pid!,
    starts: () =>
      lines('start ').map(([index, attempt, key, at]) => ({
        index: Number(index),
        attempt: Number(attempt),
        key,
        at: Number(at),
      })),
    acked: () =>
      lines('acked ')
        .flatMap(([list]) => (list ? list.split(',') : []))
        .map(Number),
  });
}
