import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { api } from '../support/ordinal-process.js';

/** A message of about `bytes` that PostgreSQL cannot compress much (random text). */
const bulky = (bytes: number) => ({
  messageType: 'Bulky',
  content: { blob: randomBytes(Math.floor((bytes * 3) / 4)).toString('base64') },
});

/** Fills the file system of `folder` with a file in it, leaving about `leave` bytes free. */
function fill(folder: string, leave: number): string {
  const filler = join(folder, 'filler');
  const { bavail, bsize } = statfsSync(folder);
  writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - leave)));
  return filler;
}

describe('the embedded database (PGlite) out of disk: 503 storage_full, /health says so, recovery once space is back', () => {
  let root: string;
  let dir: string;
  let wal: string;
  let server: ServerProcess | null = null;
  let base: string;

  /** Writes bulky messages until one is refused; returns the refusal. */
  async function writeUntilRefused() {
    for (let i = 0; i < 60; i++) {
      const answer = await api(base, 'PUT', '/api/events/message', bulky(400_000));
      if (answer.status !== 201) return answer;
    }
    throw new Error('every write was accepted');
  }

  /** Writes a small message until it is accepted (the database reopens in the background). */
  async function writeUntilAccepted(deadlineMs: number) {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const answer = await api(base, 'PUT', '/api/events/message', bulky(100));
      if (answer.status === 201 || Date.now() > deadline) return answer;
      expect({ status: answer.status, code: answer.body.code }).toEqual({
        status: 503,
        code: 'storage_full',
      });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  beforeAll(async () => {
    // Given the data folder on a 96 MB tmpfs, and its write-ahead log on a 40 MB one inside it
    root = mkdtempSync(join(tmpdir(), 'ordinal-embedded-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', root]);
    dir = join(root, 'pglite');
    wal = join(dir, 'pg_wal');
    mkdirSync(wal, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', wal]);
    server = spawnServer({
      ORDINAL_EMBEDDED: '1',
      ORDINAL_EMBEDDED_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
    });
    base = `http://127.0.0.1:${await listeningPort(server, 60_000)}`;
    await server.waitForOutput(/Development token/, 60_000);
  }, 90_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    for (const mount of [wal, root]) execFileSync('umount', ['-l', mount]);
    rmSync(root, { recursive: true, force: true });
  });

  it('a full data folder: writes answer 503 storage_full with Retry-After, /health is degraded naming it, writes resume when space is freed', async () => {
    // Given the data folder's disk nearly full
    const filler = fill(root, 1024 * 1024);
    // When messages are written until one is refused
    const refused = await writeUntilRefused();
    // Then it is 503 storage_full with Retry-After, naming the file that could not grow
    expect({ status: refused.status, code: refused.body.code }).toEqual({
      status: 503,
      code: 'storage_full',
    });
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(refused.body.message).toMatch(/No space left on device/);
    const health = await api(base, 'GET', '/health');
    expect(health.body).toMatchObject({ status: 'degraded', storage: 'full' });
    expect(health.body.storageError).toMatch(/No space left on device/);
    // When space is freed, Then writes are accepted again and /health is ok
    rmSync(filler);
    expect((await writeUntilAccepted(20_000)).status).toBe(201);
    expect((await api(base, 'GET', '/health')).body).toMatchObject({ status: 'ok', storage: 'ok' });
  }, 60_000);

  it('a full write-ahead log: writes answer 503 storage_full, the server keeps answering (no spin), and recovers when space is freed', async () => {
    // Given the write-ahead log's disk nearly full
    const filler = fill(wal, 512 * 1024);
    // When messages are written until one is refused
    const refused = await writeUntilRefused();
    expect({ status: refused.status, code: refused.body.code }).toEqual({
      status: 503,
      code: 'storage_full',
    });
    // Then the server still answers: another write, /health (degraded, naming the log), a read
    const again = await api(base, 'PUT', '/api/events/message', bulky(100));
    expect({ status: again.status, code: again.body.code }).toEqual({
      status: 503,
      code: 'storage_full',
    });
    const health = await api(base, 'GET', '/health');
    expect(health.body).toMatchObject({ status: 'degraded', storage: 'full' });
    expect(health.body.storageError).toMatch(/pg_wal/);
    // When space is freed, Then writes are accepted again (the database reopened) and /health is ok
    rmSync(filler);
    expect((await writeUntilAccepted(30_000)).status).toBe(201);
    expect((await api(base, 'GET', '/api/events/head')).status).toBe(200);
    expect((await api(base, 'GET', '/health')).body).toMatchObject({ status: 'ok', storage: 'ok' });
  }, 60_000);

  it('a start on a full disk says the disk is full, not that another process uses the folder', async () => {
    // Given the server stopped and its data folder's disk full
    await server!.stop();
    const filler = fill(root, 0);
    const walFiller = fill(wal, 0);
    // When it starts again
    server = spawnServer({
      ORDINAL_EMBEDDED: '1',
      ORDINAL_EMBEDDED_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
    });
    // Then it exits, saying the disk is full
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain(
      `Ordinal cannot start: The disk holding the embedded database's data folder ${dir} is full`,
    );
    expect(server.output()).not.toContain('another process');
    rmSync(filler);
    rmSync(walFiller);
  }, 60_000);
});
