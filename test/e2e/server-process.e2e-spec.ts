import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnScript, spawnServer } from '../support/server-process.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const START_SCRIPT = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'scripts',
  'start.mjs',
);
import { createServer, type Server } from 'node:net';
import { http } from '../support/test-server.js';

describe('the server as a process (start:prod, production rules)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('starts on PORT, prints the development token, serves the API docs and stops promptly on SIGTERM', async () => {
    // Given the built server started with only DATABASE_URL and PORT (0: the system picks one)
    const server = spawnServer({ DATABASE_URL: db.url, PORT: '0' });
    try {
      // Then it reports where it listens (the port it bound) and which development token it accepts
      const port = await listeningPort(server);
      expect(port).toBeGreaterThan(0);
      await server.waitForOutput(/Development token: dev-ordinal-token/);
      const docs = await fetch(`http://127.0.0.1:${port}/api/docs`);
      expect(docs.status).toBe(200);
      expect(await docs.text()).toContain('swagger');
      const res = await http(`http://127.0.0.1:${port}`, 'PUT', '/api/events/message', {
        messageType: 'FromProcess',
        content: { a: 1 },
      });
      expect(res.status).toBe(201);
      expect(res.body.id).toBe(2);
    } finally {
      // When it gets SIGTERM, it shuts down (Nest re-raises the signal after closing) promptly
      const started = Date.now();
      expect([0, 'SIGTERM']).toContain(await server.stop());
      expect(server.output()).not.toMatch(/ERROR/);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });

  it('creates a missing development database', async () => {
    const url = new URL(db.url);
    url.pathname = `/${db.name}_created`;
    const server = spawnServer({ DATABASE_URL: url.toString(), PORT: '0' });
    try {
      await server.waitForOutput(/listening on/);
      const rows = await db.admin('SELECT 1 FROM pg_database WHERE datname = $1', [
        `${db.name}_created`,
      ]);
      expect(rows).toHaveLength(1);
    } finally {
      await server.stop();
      await db.admin(`DROP DATABASE IF EXISTS ${db.name}_created WITH (FORCE)`);
    }
  });

  it('writes no StartMarker when it cannot listen (the port is taken)', async () => {
    // Given a port taken by another socket (held by the test, so no one else can take it meanwhile)
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '0.0.0.0', resolve));
    const taken = (blocker.address() as { port: number }).port;
    try {
      // When the server starts on it, it fails
      // (the StartMarker names the pid only when asked to)
      const server = spawnServer({
        DATABASE_URL: db.url,
        PORT: String(taken),
        ORDINAL_START_MARKER_IDENTITY: 'true',
      });
      expect(await server.exited).toBe(1);
      expect(server.output()).toMatch(/EADDRINUSE/);
      // Then it had migrated the log but wrote no StartMarker
      const markers = await db.query(
        "SELECT index FROM messages WHERE message_type = $1 AND body->>'pid' = $2",
        ['StartMarker', String(server.child.pid)],
      );
      expect(markers).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('says in one line what to do when PostgreSQL cannot be reached', async () => {
    const server = spawnServer({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/ordinal',
      PORT: '0',
    });
    expect(await server.exited).toBe(1);
    const lines = server.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /Cannot reach PostgreSQL at 127\.0\.0\.1:1\/ordinal.*DATABASE_URL.*docker compose -f docker\/compose\.yml up -d/,
    );
  });

  it.each([
    ['without tokens', { DATABASE_URL: 'postgres://x@127.0.0.1/x' }, /needs ORDINAL_TOKENS/],
    [
      'with the development token',
      { DATABASE_URL: 'postgres://x@127.0.0.1/x', ORDINAL_TOKENS: 'ops:dev-ordinal-token:admin' },
      /refuses the development token/,
    ],
    [
      'without DATABASE_URL',
      { ORDINAL_TOKENS: `ops:${'s'.repeat(43)}:read+write` },
      /needs DATABASE_URL/,
    ],
    [
      'with a token secret shorter than 32 characters (ordinal token makes 43)',
      { DATABASE_URL: 'postgres://x@127.0.0.1/x', ORDINAL_TOKENS: 'ops:12345:read' },
      /Ordinal cannot start: ORDINAL_ENV=production needs token secrets of at least 32 random characters; 'ops' has 5: make each with `npx ordinal token/,
    ],
  ])('refuses to start in production %s', async (_name, env, message) => {
    const server = spawnServer({ ORDINAL_ENV: 'production', PORT: '0', ...env });
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(message);
    expect(server.output()).not.toContain('listening');
  });
});

describe('npm start (scripts/start.mjs)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('says it is building before the build, how long it took, and then starts the server', async () => {
    // Given `npm start`'s script, with the installed dependencies (it skips npm ci)
    const server = spawnScript(
      START_SCRIPT,
      { DATABASE_URL: db.url, PORT: '0', AMQP_URL: '' },
      180_000,
    );
    try {
      // Then its first line says what the silent build is, and the next one that it is done
      await listeningPort(server, 180_000);
      const lines = server
        .output()
        .split('\n')
        .filter((line) => line.trim() !== '');
      expect(lines[0]).toBe(
        'Building the server and its libraries (tsc -b: about 30 s the first time, a few seconds after)...',
      );
      expect(lines[1]).toMatch(
        /^Built in \d+\.\d s; starting the server \(apps\/eventstore\/dist\/main\.js\)\.\.\.$/,
      );
    } finally {
      // (npm start forwards the signal to the server and exits when it does)
      await server.stop();
    }
  }, 200_000);
});
