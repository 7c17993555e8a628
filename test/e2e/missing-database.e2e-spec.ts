import { randomUUID } from 'node:crypto';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';

/**
 * Issue 23: the server said "Cannot reach PostgreSQL" for SQLSTATE 3D000. It says the
 * database does not exist and what to do (production), or creates it (development).
 */
describe('the server on a database that does not exist', () => {
  const name = `ordinal_missing_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const url = (() => {
    const u = new URL(serverUrl());
    u.pathname = `/${name}`;
    return u.toString();
  })();
  let maintenance: TestDatabase;
  const started: ServerProcess[] = [];

  beforeAll(async () => {
    // A suite database of its own, only to run SQL on the maintenance database
    maintenance = await createTestDatabase();
  });
  afterAll(async () => {
    for (const server of started)
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    await maintenance?.admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await maintenance?.drop();
  });
  const exists = async () =>
    (await maintenance.admin('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1;

  it('in production: exits 1 with one line saying the database does not exist and what to do', async () => {
    const server = spawnServer({
      ORDINAL_ENV: 'production',
      ORDINAL_TOKENS: 'ops:0123456789abcdef0123456789abcdef:read+write+admin',
      DATABASE_URL: url,
      PORT: '0',
      ORDINAL_LOG_FORMAT: 'json',
    });
    started.push(server);
    expect(await server.exited).toBe(1);
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    const { message } = JSON.parse(lines[0]) as { message: string };
    expect(message).toMatch(
      new RegExp(
        `^Ordinal cannot start: Database '${name}' does not exist on PostgreSQL at .* \\(SQLSTATE 3D000\\): create it`,
      ),
    );
    expect(message).not.toMatch(/Cannot reach/);
    expect(await exists()).toBe(false);
  });

  it('in development: creates it, says so, and starts', async () => {
    const server = spawnServer({ DATABASE_URL: url, PORT: '0' });
    started.push(server);
    await listeningPort(server, 60_000);
    expect(server.output()).toMatch(new RegExp(`Created database for ${name}`));
    expect(await exists()).toBe(true);
    await server.stop();
  });
});
