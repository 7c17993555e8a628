import { spawnScript, type ServerProcess } from './server-process.js';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built projection worker (`npm test` runs `tsc -b` first): a user's service with one projection. */
export const PROJECTION_WORKER = join(
  root,
  'test',
  'bench',
  'dist',
  'support',
  'projection-worker.js',
);

/** A projection worker in its own process. */
export interface WorkerProcess extends ServerProcess {
  pid: number;
}

/** Starts a worker and resolves once it printed `worker ready`. */
export async function spawnWorker(
  env: Record<string, string>,
  script = PROJECTION_WORKER,
): Promise<WorkerProcess> {
  const process_ = spawnScript(script, env, 30_000);
  const worker: WorkerProcess = Object.assign(process_, { pid: process_.child.pid! });
  await Promise.race([
    worker.waitForOutput(/worker ready/, 60_000),
    worker.exited.then((code) =>
      Promise.reject(new Error(`worker exited with ${code}:\n${worker.output()}`)),
    ),
  ]);
  return worker;
}
