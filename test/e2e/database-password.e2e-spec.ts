import { createServer, type Server, type Socket } from 'node:net';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { waitFor } from '../support/test-server.js';

/** A password as `openssl rand -base64 24` makes them, and worse: every character a URL reserves. */
const PASSWORD = 'Zx/9+q@w#Lk?e%21';
const ROLE = `ordinal_pw_${process.pid}`;

/** What a client sent a PostgreSQL server that asks for a clear-text password. */
interface Captured {
  user: string;
  database: string;
  password: string;
}

/**
 * A PostgreSQL look-alike that asks every client for its password in clear text, records
 * what it was sent, and refuses it (28P01): what the server process really sends, checked
 * without changing the real server's pg_hba.conf (trust on 127.0.0.1).
 */
async function passwordCatcher(): Promise<{
  port: number;
  captured: Captured[];
  close(): Promise<void>;
}> {
  const captured: Captured[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let started: { user: string; database: string } | null = null;
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          const body = buffer.subarray(8, length);
          buffer = buffer.subarray(length);
          if (code === 80877103) {
            socket.write('N'); // no SSL
            continue;
          }
          const parts = body.toString('utf8').split('\0');
          const params: Record<string, string> = {};
          for (let i = 0; i + 1 < parts.length; i += 2) params[parts[i]] = parts[i + 1];
          started = { user: params.user ?? '', database: params.database ?? '' };
          const ask = Buffer.alloc(9);
          ask.write('R', 0);
          ask.writeInt32BE(8, 1);
          ask.writeInt32BE(3, 5); // AuthenticationCleartextPassword
          socket.write(ask);
          continue;
        }
        if (buffer.length < 5) return;
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) return;
        const type = String.fromCharCode(buffer[0]);
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        if (type !== 'p') continue;
        captured.push({ ...started, password: body.toString('utf8').replace(/\0$/, '') });
        const fields = Buffer.from(
          `SFATAL\0C28P01\0Mpassword authentication failed for user "${started.user}"\0\0`,
        );
        const error = Buffer.alloc(5);
        error.write('E', 0);
        error.writeInt32BE(fields.length + 4, 1);
        socket.end(Buffer.concat([error, fields]));
        return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    captured,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Issue 23: a password with `/`, `@` or `#` (base64 has `/` about 4 times in 10) crashed the
 * start with `TypeError: Invalid URL … input: 'postgres://postgres:<the password>@…'`, not as
 * JSON. Now: one JSON line naming DATABASE_URL and what is wrong, exit 1, the password
 * nowhere; PG* settings (or a percent-encoded URL, or PGPASSWORD beside a URL) carry any password.
 */
describe('a database password with characters a URL reserves', () => {
  let catcher: Awaited<ReturnType<typeof passwordCatcher>>;
  const started: ServerProcess[] = [];
  const spawn = (env: Record<string, string>) => {
    const server = spawnServer({ PORT: '0', ORDINAL_LOG_FORMAT: 'json', ...env });
    started.push(server);
    return server;
  };
  const expectNoPassword = (output: string) => {
    expect(output).not.toContain(PASSWORD);
    expect(output).not.toContain(encodeURIComponent(PASSWORD));
    expect(output).not.toContain('9+q@w');
  };

  beforeAll(async () => {
    catcher = await passwordCatcher();
  });
  afterAll(async () => {
    for (const server of started)
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    await catcher?.close();
  });

  it('refuses a raw password in DATABASE_URL with one JSON line naming DATABASE_URL, and exits 1', async () => {
    // Given the password put raw into DATABASE_URL, as compose did
    const server = spawn({
      DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:${catcher.port}/ordinal`,
    });
    // Then the process exits 1 once
    expect(await server.exited).toBe(1);
    // With one JSON error line that names DATABASE_URL and what to do
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as { level: string; message: string };
    expect(line.level).toBe('error');
    expect(line.message).toMatch(/^Ordinal cannot start: DATABASE_URL is not a valid URL/);
    expect(line.message).toMatch(/percent-encode/);
    // And the password appears nowhere
    expectNoPassword(server.output());
    expect(catcher.captured).toEqual([]);
  });

  it.each([
    [
      'PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE',
      (port: number) => ({
        PGHOST: '127.0.0.1',
        PGPORT: String(port),
        PGUSER: ROLE,
        PGPASSWORD: PASSWORD,
        PGDATABASE: 'lending',
      }),
    ],
    [
      'a percent-encoded DATABASE_URL',
      (port: number) => ({
        DATABASE_URL: `postgres://${ROLE}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/lending`,
      }),
    ],
    [
      'DATABASE_URL without a password, and PGPASSWORD',
      (port: number) => ({
        DATABASE_URL: `postgres://${ROLE}@127.0.0.1:${port}/lending`,
        PGPASSWORD: PASSWORD,
      }),
    ],
  ])('sends the exact password given by %s, and never prints it', async (_how, envOf) => {
    // Given a database that asks for the password and refuses it
    const before = catcher.captured.length;
    const server = spawn(envOf(catcher.port));
    // Then the server sent exactly the user, database and password it was given
    expect(await server.exited).toBe(1);
    expect(catcher.captured.slice(before)[0]).toEqual({
      user: ROLE,
      database: 'lending',
      password: PASSWORD,
    });
    // And said why it stopped without the password
    expect(server.output()).toMatch(/Ordinal cannot start: .*28P01/);
    expectNoPassword(server.output());
  });

  describe('on the real PostgreSQL', () => {
    let db: TestDatabase;

    beforeAll(async () => {
      db = await createTestDatabase(undefined, { blank: true });
      // A role of the test's with the password (identifiers cannot be parameters: ROLE is ours)
      await db.admin(`DROP ROLE IF EXISTS ${ROLE}`);
      await db.admin(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD.replaceAll("'", "''")}'`);
      await db.admin(`ALTER DATABASE ${db.name} OWNER TO ${ROLE}`);
      await db.query(`ALTER SCHEMA public OWNER TO ${ROLE}`);
    });
    afterAll(async () => {
      await db?.drop();
      await db?.admin(`DROP ROLE IF EXISTS ${ROLE}`);
    });

    it('starts with PG* settings and connects as the role they name', async () => {
      const server = spawn({
        PGHOST: '127.0.0.1',
        PGPORT: new URL(db.url).port || '5432',
        PGUSER: ROLE,
        PGPASSWORD: PASSWORD,
        PGDATABASE: db.name,
      });
      await listeningPort(server, 60_000);
      const sessions = await waitFor(
        async () => {
          const rows = await db.admin(
            "SELECT usename FROM pg_stat_activity WHERE datname = $1 AND application_name = 'ordinal'",
            [db.name],
          );
          return rows.length > 0 && rows;
        },
        10_000,
        "the server's sessions",
      );
      expect(new Set(sessions.map((r) => r.usename))).toEqual(new Set([ROLE]));
      expectNoPassword(server.output());
      await server.stop();
    });
  });
});
