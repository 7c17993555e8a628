import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { api, startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';

/** The postgres OS user must own a tablespace's folder. */
function postgresOwner(): { uid: number; gid: number } {
  const [uid, gid] = ['-u', '-g'].map((flag) =>
    Number(execFileSync('id', [flag, 'postgres']).toString().trim()),
  );
  return { uid, gid };
}

/** A message of about `bytes` that PostgreSQL cannot compress much (random text). */
const bulky = (bytes: number) => ({
  messageType: 'Bulky',
  content: { blob: randomBytes(Math.floor((bytes * 3) / 4)).toString('base64') },
});

describe('PostgreSQL out of disk (SQLSTATE 53100): 503 storage_full, /health says so, and writes resume once space is back', () => {
  let mountPoint: string;
  let db: TestDatabase;
  let server: OrdinalProcess | null = null;
  const tablespace = `ordinal_full_${process.pid}`;

  beforeAll(async () => {
    // Given a test database in a tablespace on a 40 MB tmpfs
    mountPoint = mkdtempSync(join(tmpdir(), 'ordinal-tablespace-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', mountPoint]);
    const location = join(mountPoint, 'ts');
    mkdirSync(location);
    const { uid, gid } = postgresOwner();
    chownSync(location, uid, gid);
    db = await createTestDatabase('ordinal_full');
    await db.admin(`CREATE TABLESPACE ${tablespace} LOCATION '${location}'`);
    await db.admin(`ALTER DATABASE ${db.name} SET TABLESPACE ${tablespace}`);
    server = await startOrdinalProcess(db.url);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    await db?.admin(`DROP TABLESPACE IF EXISTS ${tablespace}`).catch(() => undefined);
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it('answers 503 storage_full with Retry-After (never 500), reports it in /health, and recovers when space is freed', async () => {
    const base = server!.baseUrl;
    expect((await api(base, 'PUT', '/api/events/message', bulky(1000))).status).toBe(201);
    // Given the tablespace's disk nearly full (a filler beside the tablespace's folder)
    const filler = join(mountPoint, 'filler');
    const { bavail, bsize } = statfsSync(mountPoint);
    writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 2 * 1024 * 1024)));

    // When messages are written until PostgreSQL runs out of space
    let refused: Awaited<ReturnType<typeof api>> | null = null;
    for (let i = 0; i < 40 && !refused; i++) {
      const answer = await api(base, 'PUT', '/api/events/message', bulky(200_000));
      if (answer.status !== 201) refused = answer;
    }

    // Then the write is refused with 503 storage_full and Retry-After, naming the storage
    expect(refused).not.toBeNull();
    expect({ status: refused!.status, code: refused!.body.code }).toEqual({
      status: 503,
      code: 'storage_full',
    });
    expect(refused!.headers.get('retry-after')).toBeTruthy();
    expect(refused!.body.message).toMatch(/No space left on device/);
    // And /health says the storage is full (degraded: reads still work)
    const health = await api(base, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', database: 'up', storage: 'full' });
    expect(health.body.storageError).toMatch(/No space left on device/);
    expect((await api(base, 'GET', '/api/events/head')).status).toBe(200);

    // When space is freed
    rmSync(filler);

    // Then writes are accepted again and /health is ok
    expect((await api(base, 'PUT', '/api/events/message', bulky(1000))).status).toBe(201);
    expect((await api(base, 'GET', '/health')).body).toMatchObject({
      status: 'ok',
      storage: 'ok',
    });
  });
});
