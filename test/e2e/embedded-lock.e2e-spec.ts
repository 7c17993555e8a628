import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServer, type ServerProcess } from '../support/server-process.js';
import { http } from '../support/test-server.js';

/** A server on the embedded database in `dir`; resolves with the first line saying it started or why not. */
async function startEmbedded(
  dir: string,
): Promise<{ server: ServerProcess; base: string; line: string }> {
  const server = spawnServer({
    ORDINAL_EMBEDDED: '1',
    ORDINAL_EMBEDDED_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const line = await server.waitForOutput(/Development token|Ordinal cannot start: .*/, 60_000);
  // (the port it bound, when it started: PORT=0 lets the system pick one)
  const port = /listening on http:\/\/localhost:(\d+)/.exec(server.output())?.[1] ?? '0';
  return { server, base: `http://127.0.0.1:${port}`, line };
}

describe('one server per embedded data folder', () => {
  let root: string;
  const servers: ServerProcess[] = [];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'ordinal-embedded-lock-'));
  });
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses a second server on a data folder in use, naming the folder and the holder; a killed holder frees it', async () => {
    const dir = join(root, 'pglite');
    // Given a server on the embedded database in dir, which acknowledged a write
    const first = await startEmbedded(dir);
    servers.push(first.server);
    expect(first.line).toBe('Development token');
    const stored = await http(first.base, 'PUT', '/api/events/message', {
      messageType: 'Held',
      content: { n: 1 },
    });
    expect(stored.status).toBe(201);

    // When a second server starts on the same folder (another port)
    const second = await startEmbedded(dir);
    servers.push(second.server);

    // Then it refuses, naming the folder and the process that holds it, and exits
    expect(second.line).toBe(
      `Ordinal cannot start: The embedded database's data folder ${dir} is in use by process ${first.server.child.pid}: stop that process, or give this one another folder (ORDINAL_EMBEDDED_DIR)`,
    );
    expect(await second.server.exited).toBe(1);
    // And the first still serves
    expect((await http(first.base, 'GET', '/health')).status).toBe(200);

    // When the holder is killed (no clean shutdown)
    first.server.child.kill('SIGKILL');
    await first.server.exited;

    // Then a new server starts on the folder and writes
    const third = await startEmbedded(dir);
    servers.push(third.server);
    expect(third.line).toBe('Development token');
    expect(
      (await http(third.base, 'PUT', '/api/events/message', { messageType: 'After', content: {} }))
        .status,
    ).toBe(201);
    expect(await third.server.stop()).toBe(0);
  });
});
