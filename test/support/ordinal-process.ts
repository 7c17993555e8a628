import { http } from './test-server.js';
import { createServer } from 'node:net';
import { listeningPort, spawnServer, type ServerProcess } from './server-process.js';

/**
 * A free TCP port on 127.0.0.1 (asked of the kernel, then released for the child to take):
 * another process may take it in between. Prefer PORT=0 and `listeningPort`; this is for
 * processes that cannot report the port they bound.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The built server in its own process, listening, with its base URL. */
export interface OrdinalProcess extends ServerProcess {
  baseUrl: string;
  port: number;
}

/**
 * Spawns `apps/eventstore/dist/main.js` on `databaseUrl` with `env` on top, and resolves once
 * it says it listens. Without `port` it binds port 0 and reports the port it got; pass a
 * `port` to restart "the same" server.
 */
export async function startOrdinalProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  port?: number,
): Promise<OrdinalProcess> {
  const server = spawnServer({
    DATABASE_URL: databaseUrl,
    PORT: String(port ?? 0),
    HOST: '127.0.0.1',
    ORDINAL_DUPLICATE_WINDOW: '0',
    ...env,
  });
  let chosen: number;
  try {
    chosen = await listeningPort(server, 30_000);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return Object.assign(server, { baseUrl: `http://127.0.0.1:${chosen}`, port: chosen });
}

/** A JSON request on a fresh connection (no keep-alive: a test that restarts the server must not reuse a socket of the old process). */
export const api = (baseUrl: string, method: string, path: string, body?: unknown) =>
  http(baseUrl, method, path, body, undefined, { fresh: true });
