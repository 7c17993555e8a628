import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { runCli } from '../support/cli-process.js';

/**
 * README's `npx ordinal status` right after `npm start`: no token is set, the server is a
 * development server on this machine, so the CLI uses the development token and says so.
 * Real processes on both sides: the built CLI and the built server.
 */
describe('the CLI without a token, against a server process on this machine', () => {
  const NOTICE = /no token set \(ORDINAL_TOKEN or --token\): using the development token/;
  let db: TestDatabase;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('a development server (ORDINAL_ENV unset): the CLI uses the development token, says so on stderr, and the command works', async () => {
    // Given a development server, as `npm start` runs it
    server = spawnServer({ DATABASE_URL: db.url, PORT: '0' });
    const port = await listeningPort(server, 60_000);
    // When `ordinal status` runs with no ORDINAL_TOKEN and no --token
    const status = await runCli(['status', '--json'], { ORDINAL_URL: `http://localhost:${port}` });
    // Then it succeeds with the server's status, and stderr says which token it used
    expect([status.code, status.stderr]).toEqual([0, expect.stringMatching(NOTICE)]);
    expect(JSON.parse(status.stdout)).toMatchObject({ head: expect.any(Number) });
    // And a token that is set is used as it is, without the notice
    const given = await runCli(['status', '--json', '--token', 'dev-ordinal-token'], {
      ORDINAL_URL: `http://127.0.0.1:${port}`,
    });
    expect([given.code, given.stderr]).toEqual([0, '']);
  }, 90_000);

  it('a production server: the development token is refused (exit 4), and the message says to set a token', async () => {
    // Given a production server on this machine with a token of its own
    const secret = randomBytes(32).toString('base64url');
    server = spawnServer({
      ORDINAL_ENV: 'production',
      DATABASE_URL: db.url,
      ORDINAL_TOKENS: `ops:${secret}:read`,
      HOST: '127.0.0.1',
      PORT: '0',
    });
    const port = await listeningPort(server, 60_000);
    // When `ordinal status` runs with no token
    const refused = await runCli(['status'], { ORDINAL_URL: `http://127.0.0.1:${port}` });
    // Then the server refuses the development token, and the CLI says what to do
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(NOTICE);
    expect(refused.stderr).toContain(
      `The server at http://127.0.0.1:${port} refused the development token (401): it is not a development server. Set ORDINAL_TOKEN or pass --token`,
    );
    // And with its token the command works
    const ok = await runCli(['status', '--json'], {
      ORDINAL_URL: `http://127.0.0.1:${port}`,
      ORDINAL_TOKEN: secret,
    });
    expect([ok.code, ok.stderr]).toEqual([0, '']);
  }, 90_000);
});
