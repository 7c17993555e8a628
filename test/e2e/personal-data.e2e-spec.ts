import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import { runCli } from '../support/cli-process.js';
import { startLogContext } from '../support/log-context.js';

/**
 * Issue 25: personal data sealed per subject, read in clear only with the `personal` scope,
 * forgotten by destroying the subject's key, forgotten again after a key store restore.
 * One server for the round trip and the erasure; short restarts for the start-up checks.
 */
describe('personal data that can be forgotten (D2)', () => {
  const masterKey = randomBytes(32).toString('base64');
  const READER = { authorization: 'Bearer reader-secret' };
  const PRIVY = { authorization: 'Bearer privy-secret' };
  const env = {
    ORDINAL_TOKENS: 'reader:reader-secret:read;privy:privy-secret:read+personal',
    ORDINAL_MASTER_KEY: masterKey,
  };
  let db: TestDatabase;
  let server: TestServer;
  const get = (path: string, headers: Record<string, string>) =>
    http(server.baseUrl, 'GET', path, undefined, headers);
  const publish = (content: unknown, messageType = 'CustomerRegistered') =>
    http(server.baseUrl, 'PUT', '/api/events/message', { messageType, content }, DEV_AUTH);
  /** Each stored row's bytes as PostgreSQL holds them (every column), by index. */
  const rowBytes = async () =>
    new Map(
      (
        await db.query<{ index: string; row: string }>(
          'SELECT index::text, m::text AS row FROM messages m ORDER BY index',
        )
      ).map((r) => [Number(r.index), r.row]),
    );
  const sseMessages = async (headers: Record<string, string>, endIndex: number) => {
    const sse = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=1&endIndex=${endIndex}&types=CustomerRegistered`,
      headers,
    );
    await sse.waitFor(() => sse.events.some((e) => e.event === 'stream-ended'));
    sse.close();
    return sse.events.filter((e) => e.event === 'message').map((e) => e.data.message);
  };

  let alice: number;
  let bob: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, env);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('takes a rule over REST (admin) and reads it back', async () => {
    const rule = {
      subject: '/customerId',
      fields: ['/email', '/address'],
      replacement: { '/email': 'erased@invalid' },
    };
    const put = await http(
      server.baseUrl,
      'PUT',
      '/api/personal-data/rules/CustomerRegistered',
      rule,
      DEV_AUTH,
    );
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ messageType: 'CustomerRegistered', ...rule });
    // A reader without admin may not set one
    const refused = await http(
      server.baseUrl,
      'PUT',
      '/api/personal-data/rules/Other',
      rule,
      READER,
    );
    expect(refused.status).toBe(403);
    const bad = await http(
      server.baseUrl,
      'PUT',
      '/api/personal-data/rules/Other',
      { subject: 'x', fields: ['/email'] },
      DEV_AUTH,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_personal_data_rule');
    expect(
      (await get('/api/personal-data/rules/CustomerRegistered', DEV_AUTH)).body.fields,
    ).toEqual(['/email', '/address']);
  });

  it('refuses a rule for a type Ordinal writes itself (REST, rules file, module options), leaves out one stored before', async () => {
    // A rule on the StartMarker would make every start fail to write it (no /customerId in it)
    const rule = { subject: '/customerId', fields: ['/email'] };
    for (const type of ['StartMarker', '$subject-erased', '$stream-deleted', '$audit.read']) {
      const res = await http(
        server.baseUrl,
        'PUT',
        `/api/personal-data/rules/${encodeURIComponent(type)}`,
        rule,
        DEV_AUTH,
      );
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_personal_data_rule');
      expect(res.body.message).toContain(type);
    }
    expect((await get('/api/personal-data/rules/StartMarker', DEV_AUTH)).status).toBe(404);
    // A start that took the rule anyway is closed again and counted as a failure
    const notStarted = async (start: Promise<{ close(): Promise<void> }>) => {
      const started = await start.catch((error: Error) => error);
      if (started instanceof Error) return started.message;
      await started.close();
      return 'started';
    };
    const dir = mkdtempSync(join(tmpdir(), 'ordinal-rules-'));
    try {
      const file = join(dir, 'personal.json');
      writeFileSync(file, JSON.stringify({ rules: { StartMarker: rule } }));
      expect(
        await notStarted(startServer(db.url, { ...env, ORDINAL_PERSONAL_DATA_RULES: file })),
      ).toMatch(/ORDINAL_PERSONAL_DATA_RULES.*StartMarker/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(
      await notStarted(startLogContext(db.url, { personalData: { rules: { StartMarker: rule } } })),
    ).toMatch(/personalData\.rules\.StartMarker/);
    // A StartMarker rule stored over REST before it was refused does not keep a start from
    // writing its marker: it is left out, with a warning
    await db.query(
      `INSERT INTO personal_data_rules (message_type, rule, source) VALUES ('StartMarker', $1, 'api')`,
      [JSON.stringify({ ...rule, replacement: {} })],
    );
    const other = await startServer(db.url, env);
    try {
      const health = await http(other.baseUrl, 'GET', '/health', undefined, {}, { fresh: true });
      expect(health.body.startMarker).toEqual(expect.any(Number));
      const marker = await http(
        other.baseUrl,
        'GET',
        `/api/events/${health.body.startMarker}`,
        undefined,
        DEV_AUTH,
        { fresh: true },
      );
      expect(marker.body.messageType).toBe('StartMarker');
      expect(marker.body.redacted).toBeUndefined();
      const stored = await http(
        other.baseUrl,
        'GET',
        '/api/personal-data/rules/StartMarker',
        undefined,
        DEV_AUTH,
        { fresh: true },
      );
      expect(stored.status).toBe(404);
    } finally {
      await other.close();
      await db.query(`DELETE FROM personal_data_rules WHERE message_type = 'StartMarker'`);
    }
  });

  it('refuses a message of a ruled type without its subject, naming the pointer', async () => {
    const res = await publish({ email: 'nobody@example.com' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_message');
    expect(res.body.message).toContain('/customerId');
    expect(
      (await db.query("SELECT 1 FROM messages WHERE body::text LIKE '%nobody@%'")).length,
    ).toBe(0);
    // A bulk import does not seal, so it refuses a ruled type rather than store it in clear
    const imported = await http(
      server.baseUrl,
      'POST',
      '/api/events/import',
      JSON.stringify({
        messageType: 'CustomerRegistered',
        content: { customerId: 'c-9', email: 'x@example.com' },
      }) + '\n',
      { ...DEV_AUTH, 'content-type': 'application/x-ndjson' },
    );
    expect(imported.status).toBe(400);
    expect(imported.body.message).toContain('personal-data rule');
  });

  it('stores personal fields sealed: no row holds a clear value, and only the personal scope reads them', async () => {
    // Given two customers' messages
    const a = await publish({
      customerId: 'c-1',
      email: 'alice@example.com',
      address: { city: 'Lyon' },
      plan: 'gold',
    });
    const b = await publish({ customerId: 'c-2', email: 'bob@example.com', plan: 'free' });
    expect([a.status, b.status]).toEqual([201, 201]);
    alice = a.body.id;
    bob = b.body.id;
    // Then the log's rows (every column, as PostgreSQL holds them) hold no clear value
    const rows = [...(await rowBytes()).values()].join('\n');
    for (const clear of ['alice@example.com', 'bob@example.com', 'Lyon'])
      expect(rows).not.toContain(clear);
    // and the key store holds no subject id
    const keys = await db.query<{ row: string }>(
      'SELECT k::text AS row FROM ordinal_keys.subject_keys k',
    );
    expect(keys).toHaveLength(2);
    expect(keys.map((k) => k.row).join()).not.toContain('c-1');

    // A reader without the personal scope gets the replacements and `redacted`
    const plain = (await get(`/api/events/${alice}`, READER)).body;
    expect(plain.body).toEqual({
      customerId: 'c-1',
      email: 'erased@invalid',
      address: null,
      plan: 'gold',
    });
    expect(plain.redacted).toEqual(['/email', '/address']);
    // A reader with it gets the clear values, in the stored key order, and no `redacted`
    const clear = (await get(`/api/events/${alice}`, PRIVY)).body;
    expect(clear.body).toEqual({
      customerId: 'c-1',
      email: 'alice@example.com',
      address: { city: 'Lyon' },
      plan: 'gold',
    });
    expect(Object.keys(clear.body)).toEqual(Object.keys(plain.body));
    expect(clear.redacted).toBeUndefined();
    // Pages and SSE replay say the same
    const page = (await get(`/api/events?types=CustomerRegistered`, READER)).body.messages;
    expect(page.map((m: { body: { email: string } }) => m.body.email)).toEqual([
      'erased@invalid',
      'erased@invalid',
    ]);
    const privyPage = (await get(`/api/events?types=CustomerRegistered`, PRIVY)).body.messages;
    expect(privyPage.map((m: { body: { email: string } }) => m.body.email)).toEqual([
      'alice@example.com',
      'bob@example.com',
    ]);
    expect((await sseMessages(READER, bob)).map((m) => m.body.email)).toEqual([
      'erased@invalid',
      'erased@invalid',
    ]);
    const privySse = await sseMessages(PRIVY, bob);
    expect(privySse.map((m) => m.body.email)).toEqual(['alice@example.com', 'bob@example.com']);
    expect(privySse[0]).toEqual(clear);
  });

  it('delivers live SSE messages in clear only to the personal scope', async () => {
    const open = (headers: Record<string, string>) =>
      SseConnection.open(
        server.baseUrl,
        `/api/events/stream?startIndex=${bob + 1}&types=CustomerRegistered`,
        headers,
      );
    const [plainSse, privySse] = await Promise.all([open(READER), open(PRIVY)]);
    await Promise.all(
      [plainSse, privySse].map((s) =>
        s.waitFor(() => s.events.some((e) => e.event === 'connected')),
      ),
    );
    const c = await publish({ customerId: 'c-3', email: 'carol@example.com' });
    const arrived = (s: SseConnection) =>
      s.events.find((e) => e.event === 'message' && e.data.message.id === c.body.id);
    await Promise.all([plainSse, privySse].map((s) => s.waitFor(() => arrived(s) !== undefined)));
    plainSse.close();
    privySse.close();
    expect(arrived(plainSse)!.data.message.body.email).toBe('erased@invalid');
    expect(arrived(plainSse)!.data.message.redacted).toEqual(['/email']);
    expect(arrived(privySse)!.data.message.body.email).toBe('carol@example.com');
  });

  it('hands consumer group deliveries in clear only to the personal scope', async () => {
    const emails = async (group: string, headers: Record<string, string>) => {
      const defined = await http(
        server.baseUrl,
        'PUT',
        `/api/consumer-groups/${group}`,
        { source: { types: ['CustomerRegistered'] } },
        DEV_AUTH,
      );
      expect(defined.status).toBeLessThan(300);
      const fetched = await http(
        server.baseUrl,
        'POST',
        `/api/consumer-groups/${group}/fetch`,
        { memberId: 'm1', max: 2 },
        headers,
      );
      expect(fetched.status).toBe(200);
      return fetched.body.events.map((e: { body: { email: string } }) => e.body.email);
    };
    expect(await emails('plain', READER)).toEqual(['erased@invalid', 'erased@invalid']);
    expect(await emails('privy', PRIVY)).toEqual(['alice@example.com', 'bob@example.com']);
  });

  it('reads aggregate stream events by the same rules', async () => {
    const append = await http(
      server.baseUrl,
      'POST',
      '/api/streams/customer-c1/events',
      {
        expectedVersion: 0,
        events: [
          {
            eventType: 'CustomerRegistered',
            data: { customerId: 'c-1', email: 'alice@stream.example' },
          },
        ],
      },
      DEV_AUTH,
    );
    expect(append.status).toBe(201);
    const plain = (await get('/api/streams/customer-c1', READER)).body.events[0];
    expect(plain.data.email).toBe('erased@invalid');
    expect(plain.redacted).toEqual(['/email']);
    // The personal scope gets the clear values and no `redacted`, like every other read
    const privy = (await get('/api/streams/customer-c1', PRIVY)).body.events[0];
    expect(privy.data.email).toBe('alice@stream.example');
    expect(privy.redacted).toBeUndefined();
    // from a version too, and without the snapshot
    const second = await http(
      server.baseUrl,
      'POST',
      '/api/streams/customer-c1/events',
      {
        expectedVersion: 'any',
        events: [
          {
            eventType: 'CustomerRegistered',
            data: { customerId: 'c-1', email: 'alice@second.example' },
          },
        ],
      },
      DEV_AUTH,
    );
    expect(second.status).toBe(201);
    const fromTwo = (await get('/api/streams/customer-c1?fromVersion=2&snapshot=false', PRIVY)).body
      .events;
    expect(fromTwo).toHaveLength(1);
    expect(fromTwo[0].data.email).toBe('alice@second.example');
    expect(fromTwo[0].redacted).toBeUndefined();
  });

  let keyBeforeErasure: { subject_hash: string; wrapped_key: Buffer };

  it('erases a subject: every path shows the replacement, indices and others unchanged, new appends refused', async () => {
    // Given the log's rows and c-1's key (a key store backup taken before the erasure)
    const before = await rowBytes();
    keyBeforeErasure = (
      await db.query<{ subject_hash: string; wrapped_key: Buffer }>(
        'SELECT subject_hash, wrapped_key FROM ordinal_keys.subject_keys ORDER BY created_at LIMIT 1',
      )
    )[0];
    // When c-1 is erased
    const erased = await http(
      server.baseUrl,
      'POST',
      '/api/subjects/c-1/erase',
      { reason: 'art. 17 request 1' },
      DEV_AUTH,
    );
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ reason: 'art. 17 request 1', alreadyErased: false });
    // Then the personal scope too gets the replacement for c-1, on every path
    const clear = (await get(`/api/events/${alice}`, PRIVY)).body;
    expect(clear.body.email).toBe('erased@invalid');
    expect(clear.redacted).toEqual(['/email', '/address']);
    expect((await sseMessages(PRIVY, bob)).map((m) => m.body.email)).toEqual([
      'erased@invalid',
      'bob@example.com',
    ]);
    expect((await get('/api/streams/customer-c1', PRIVY)).body.events[0].data.email).toBe(
      'erased@invalid',
    );
    // while c-2 still reads in clear
    expect((await get(`/api/events/${bob}`, PRIVY)).body.body.email).toBe('bob@example.com');
    // and no stored row changed (indices, versions, other subjects byte-identical); the marker was appended
    const after = await rowBytes();
    for (const [index, row] of before) expect(after.get(index)).toBe(row);
    const marker = (await get(`/api/events/${erased.body.markerIndex}`, READER)).body;
    expect(marker).toMatchObject({ messageType: '$subject-erased', body: { subject: 'c-1' } });
    // The ledger keeps the hash, not the id
    const ledger = await db.query<{ row: string }>('SELECT l::text AS row FROM erasure_ledger l');
    expect(ledger).toHaveLength(1);
    expect(ledger[0].row).not.toContain('c-1');
    // A new message naming c-1 is refused
    const again = await publish({ customerId: 'c-1', email: 'alice@again.example' });
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('subject_erased');
    // Erasing twice changes nothing
    const twice = await http(
      server.baseUrl,
      'POST',
      '/api/subjects/c-1/erase',
      { reason: 'again' },
      DEV_AUTH,
    );
    expect(twice.body).toMatchObject({
      alreadyErased: true,
      reason: 'art. 17 request 1',
      markerIndex: erased.body.markerIndex,
    });
  });

  it('erases with `ordinal subjects erase` and reapplies with `ordinal erasures reapply`', async () => {
    const cli = (args: string[]) =>
      runCli(args, { ORDINAL_URL: server.baseUrl, ORDINAL_TOKEN: 'dev-ordinal-token' });
    const erased = await cli(['subjects', 'erase', 'c-3', '--reason', 'closed account', '--json']);
    expect(erased.code).toBe(0);
    expect(JSON.parse(erased.stdout)).toMatchObject({
      reason: 'closed account',
      alreadyErased: false,
    });
    const carol = (await get('/api/events?types=CustomerRegistered', PRIVY)).body.messages.find(
      (m: { body: { customerId: string } }) => m.body.customerId === 'c-3',
    );
    expect(carol.body.email).toBe('erased@invalid');
    const reapplied = await cli(['erasures', 'reapply']);
    expect(reapplied.code).toBe(0);
    expect(reapplied.stdout).toContain('2 subject(s)');
  });

  it('forgets again at start after the key store is restored from an older backup', async () => {
    // Given a key store restored from before the erasure (c-1's key is back)
    await server.close();
    await db.query(
      `UPDATE ordinal_keys.subject_keys SET wrapped_key = $1, destroyed_at = NULL WHERE subject_hash = $2`,
      [keyBeforeErasure.wrapped_key, keyBeforeErasure.subject_hash],
    );
    const keyOf = async () =>
      (
        await db.query<{ wrapped_key: Buffer | null }>(
          'SELECT wrapped_key FROM ordinal_keys.subject_keys WHERE subject_hash = $1',
          [keyBeforeErasure.subject_hash],
        )
      )[0].wrapped_key;
    expect(await keyOf()).not.toBeNull();
    // When the server starts
    server = await startServer(db.url, env);
    // Then the ledger destroyed the key again
    expect(await keyOf()).toBeNull();
    // and c-1 is forgotten again
    expect((await get(`/api/events/${alice}`, PRIVY)).body.body.email).toBe('erased@invalid');
    expect((await get(`/api/events/${bob}`, PRIVY)).body.body.email).toBe('bob@example.com');
  });

  it('another server process forgets a subject erased through this one, without a restart', async () => {
    // Given a second process on the same database that has read c-2 in clear (its key in memory)
    const other = await startServer(db.url, env);
    try {
      const viaOther = () =>
        http(other.baseUrl, 'GET', `/api/events/${bob}`, undefined, PRIVY).then(
          (r) => r.body.body.email as string,
        );
      expect(await viaOther()).toBe('bob@example.com');
      // When c-2 is erased through the first process
      const erased = await http(
        server.baseUrl,
        'POST',
        '/api/subjects/c-2/erase',
        { reason: 'request 2' },
        DEV_AUTH,
      );
      expect(erased.status).toBe(200);
      // Then the second one shows the replacement once the marker reached it
      await waitFor(
        async () => (await viaOther()) === 'erased@invalid',
        5000,
        'the erasure in the other process',
      );
    } finally {
      await other.close();
    }
  });

  it('refuses to start with another master key (a typed error, never garbage)', async () => {
    await server.close();
    await expect(
      startServer(db.url, { ...env, ORDINAL_MASTER_KEY: randomBytes(32).toString('base64') }),
    ).rejects.toMatchObject({ code: 'master_key_mismatch' });
    // and production refuses to start without a master key when rules exist
    await expect(
      startServer(db.url, {
        ORDINAL_ENV: 'production',
        ORDINAL_TOKENS: `ops:${'s'.repeat(40)}:read`,
        ORDINAL_MASTER_KEY: '',
      }),
    ).rejects.toThrow(/ORDINAL_MASTER_KEY/);
    server = await startServer(db.url, env);
    expect((await get(`/api/events/${bob}`, PRIVY)).body.body.email).toBe('erased@invalid');
  });
});

/**
 * The key store in a database of its own (ORDINAL_KEYSTORE_URL), backed up with pg_dump before
 * an erasure and restored with pg_restore after it: the next start forgets the subject again.
 */
describe('personal data: a key store restored from a backup older than an erasure (D2)', () => {
  const env = (keystore: TestDatabase) => ({
    ORDINAL_TOKENS: 'privy:privy-secret:read+personal',
    ORDINAL_MASTER_KEY: randomBytes(32).toString('base64'),
    ORDINAL_KEYSTORE_URL: keystore.url,
  });
  const PRIVY = { authorization: 'Bearer privy-secret' };
  let db: TestDatabase;
  let keystore: TestDatabase;
  let server: TestServer | null = null;
  const dump = join(mkdtempSync(join(tmpdir(), 'ordinal-keystore-')), 'keystore.dump');

  beforeAll(async () => {
    // The key store's database blank: pg_restore --clean puts back only what the dump holds.
    [db, keystore] = await Promise.all([
      createTestDatabase(),
      createTestDatabase(undefined, { blank: true }),
    ]);
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all([db?.drop(), keystore?.drop()]);
    rmSync(dirname(dump), { recursive: true, force: true });
  });

  it('forgets the subject again after pg_restore of the key store', async () => {
    const settings = env(keystore);
    server = await startServer(db.url, settings);
    const base = server.baseUrl;
    await http(
      base,
      'PUT',
      '/api/personal-data/rules/Signup',
      { subject: '/user', fields: ['/email'] },
      DEV_AUTH,
    );
    const stored = await http(
      base,
      'PUT',
      '/api/events/message',
      { messageType: 'Signup', content: { user: 'u-1', email: 'eve@example.com' } },
      DEV_AUTH,
    );
    const read = async () =>
      (await http(server!.baseUrl, 'GET', `/api/events/${stored.body.id}`, undefined, PRIVY)).body
        .body.email as string;
    expect(await read()).toBe('eve@example.com');
    // The keys live in the key store's database, not in the log's
    expect(await keystore.query('SELECT 1 FROM ordinal_keys.subject_keys')).toHaveLength(1);
    expect(
      await db.query("SELECT 1 FROM pg_namespace WHERE nspname = 'ordinal_keys'"),
    ).toHaveLength(0);
    // Given a backup of the key store taken before the erasure
    await run('pg_dump', ['--format=custom', `--file=${dump}`, keystore.url]);
    // When the subject is erased, and the key store is then restored from that backup
    expect(
      (await http(base, 'POST', '/api/subjects/u-1/erase', { reason: 'test' }, DEV_AUTH)).status,
    ).toBe(200);
    expect(await read()).toBeNull();
    await server.close();
    server = null;
    await run('pg_restore', ['--clean', '--if-exists', `--dbname=${keystore.url}`, dump]);
    expect(
      await keystore.query('SELECT 1 FROM ordinal_keys.subject_keys WHERE wrapped_key IS NOT NULL'),
    ).toHaveLength(1);
    // Then the next start forgets the subject again
    server = await startServer(db.url, settings);
    expect(await read()).toBeNull();
    expect(
      await keystore.query('SELECT 1 FROM ordinal_keys.subject_keys WHERE wrapped_key IS NOT NULL'),
    ).toHaveLength(0);
  });
});

/** Runs a PostgreSQL client program; rejects with its output when it fails. */
function run(program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(program, args, (error, _stdout, stderr) =>
      error ? reject(new Error(`${program} failed: ${stderr || error.message}`)) : resolve(),
    ),
  );
}
