import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer } from '../support/server-process.js';
import { http } from '../support/test-server.js';

/** ORDINAL_MIGRATIONS=skip|run|only, on the built server as a process (docs/configuration.md). */
describe('ORDINAL_MIGRATIONS: what a start does with the migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(undefined, { blank: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  const applied = async () =>
    (await db.query<{ name: string }>('SELECT name FROM ordinal_migrations ORDER BY id')).map(
      (r) => r.name,
    );

  it('skip on a database without the schema: the start fails, saying the migrations are off and how to run them', async () => {
    const server = spawnServer({ DATABASE_URL: db.url, PORT: '0', ORDINAL_MIGRATIONS: 'skip' });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain(
      'Ordinal cannot start: Migrations are off for this start, and the database has no Ordinal schema yet',
    );
    expect(server.output()).toContain('npx ordinal migrate');
    expect(server.output()).not.toContain('listening');
    const [table] = await db.query<{ exists: boolean }>(
      "SELECT to_regclass('ordinal_migrations') IS NOT NULL AS exists",
    );
    expect(table.exists).toBe(false);
  }, 60_000);

  it('only: runs every migration, writes nothing else (no StartMarker), never listens, and exits 0; a second run finds nothing to do', async () => {
    const first = spawnServer({ DATABASE_URL: db.url, PORT: '0', ORDINAL_MIGRATIONS: 'only' });
    expect(await first.exited).toBe(0);
    expect(first.output()).toMatch(
      /ORDINAL_MIGRATIONS=only: applied \d+ migration\(s\): .*; exiting/,
    );
    expect(first.output()).not.toContain('listening');
    const names = await applied();
    // The log's and every library's, the AMQP bookmarks' included (the server would run them all at start)
    expect(names.length).toBeGreaterThan(5);
    expect(names.join(' ')).toMatch(/Bookmark|Interface/i);
    expect(await db.query('SELECT index FROM messages')).toEqual([]);
    const second = spawnServer({ DATABASE_URL: db.url, PORT: '0', ORDINAL_MIGRATIONS: 'only' });
    expect(await second.exited).toBe(0);
    expect(second.output()).toContain(
      'ORDINAL_MIGRATIONS=only: nothing to migrate, the schema is up to date; exiting',
    );
    expect(await applied()).toEqual(names);
  }, 60_000);

  it('skip on an up-to-date schema: starts without migrating and serves', async () => {
    const before = await applied();
    const server = spawnServer({ DATABASE_URL: db.url, PORT: '0', ORDINAL_MIGRATIONS: 'skip' });
    try {
      const port = await listeningPort(server, 60_000);
      await server.waitForOutput(/Migrations are off for this start; the schema has every one/);
      const res = await http(`http://127.0.0.1:${port}`, 'PUT', '/api/events/message', {
        messageType: 'AfterSkip',
        content: { ok: true },
      });
      expect(res.status).toBe(201);
      expect(await applied()).toEqual(before);
    } finally {
      expect([0, 'SIGTERM']).toContain(await server.stop());
    }
  }, 60_000);

  it('skip on a schema behind this version: the start fails naming the missing migration', async () => {
    // Given a schema that lacks one of the log's migrations (its record removed: as if it never ran)
    const [newest] = await db.query<{ name: string }>(
      'SELECT name FROM ordinal_migrations ORDER BY id LIMIT 1',
    );
    await db.query('DELETE FROM ordinal_migrations WHERE name = $1', [newest.name]);
    // When the server starts with the migrations skipped
    const server = spawnServer({ DATABASE_URL: db.url, PORT: '0', ORDINAL_MIGRATIONS: 'skip' });
    // Then it stops at once, naming it
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain(
      `Ordinal cannot start: Migrations are off for this start, and the schema lacks 1 of them (${newest.name})`,
    );
    expect(server.output()).not.toContain('listening');
  }, 60_000);
});
