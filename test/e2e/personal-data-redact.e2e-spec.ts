import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { LOCKS } from '@ordinal/log/internal';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, type TestServer } from '../support/test-server.js';
import { runCli } from '../support/cli-process.js';

/**
 * Issue 25, legacy data in clear: rows of a type appended before its personal-data rule are
 * sealed in place by `POST /api/admin/redact`, as an append under the rule would have stored
 * them, and a scan verifies that none is left in clear.
 */
describe('redaction of personal data stored before its rule', () => {
  const READER = { authorization: 'Bearer reader-secret' };
  const PRIVY = { authorization: 'Bearer privy-secret' };
  let db: TestDatabase;
  let server: TestServer;
  const get = (path: string, headers: Record<string, string>) =>
    http(server.baseUrl, 'GET', path, undefined, headers);
  const redact = (body: unknown, headers = DEV_AUTH) =>
    http(server.baseUrl, 'POST', '/api/admin/redact', body, headers);
  /** Each stored row as PostgreSQL holds it: all of it, and all but what a redaction rewrites. */
  const rows = async () =>
    new Map(
      (
        await db.query<{ index: string; row: string; kept: string }>(
          `SELECT index::text, m::text AS row, (to_jsonb(m) - 'body' - 'personal' - 'content_hash')::text AS kept
           FROM messages m ORDER BY index`,
        )
      ).map((r) => [Number(r.index), r]),
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'reader:reader-secret:read;privy:privy-secret:read+personal',
      ORDINAL_MASTER_KEY: randomBytes(32).toString('base64'),
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('seals legacy rows in place, leaves everything else byte-identical, and a second run rewrites nothing', async () => {
    // Given messages of a type published in clear before it had a rule, on both publish paths
    const publish = async (messageType: string, content: unknown) => {
      const res = await http(
        server.baseUrl,
        'PUT',
        '/api/events/message',
        { messageType, content },
        DEV_AUTH,
      );
      expect(res.status).toBe(201);
      return res.body.id as number;
    };
    const alice = await publish('CustomerRegistered', {
      customerId: 'c-1',
      email: 'alice@legacy.example',
      plan: 'gold',
    });
    const streamed = await http(
      server.baseUrl,
      'POST',
      '/api/streams/customer-c2/events',
      {
        expectedVersion: 0,
        events: [
          { eventType: 'Noted', data: { note: 'first' } },
          {
            eventType: 'CustomerRegistered',
            data: { customerId: 'c-2', email: 'bob@legacy.example' },
          },
        ],
      },
      DEV_AUTH,
    );
    expect(streamed.status).toBe(201);
    const order = await publish('OrderPlaced', { orderId: 'o-1', email: 'dora@legacy.example' });
    const nobody = await publish('CustomerRegistered', { email: 'nobody@legacy.example' });
    // (the erased one's on a stream with a snapshot of its state, in clear like the row)
    const carolStream = await http(
      server.baseUrl,
      'POST',
      '/api/streams/customer-c3/events',
      {
        expectedVersion: 0,
        events: [
          {
            eventType: 'CustomerRegistered',
            data: { customerId: 'c-3', email: 'carol@legacy.example' },
          },
        ],
      },
      DEV_AUTH,
    );
    expect(carolStream.status).toBe(201);
    const snapshot = await http(
      server.baseUrl,
      'PUT',
      '/api/streams/customer-c3/snapshot',
      { version: 1, state: { email: 'carol@legacy.example' } },
      DEV_AUTH,
    );
    expect(snapshot.status).toBe(201);
    const carol = (await get('/api/streams/customer-c3?snapshot=false', DEV_AUTH)).body.events[0]
      .index;
    const bob = (await get('/api/streams/customer-c2', DEV_AUTH)).body.events[1].index;
    expect(typeof bob).toBe('number');
    const before = await rows();

    // and a rule added later, and one of the subjects erased since
    const rule = await http(
      server.baseUrl,
      'PUT',
      '/api/personal-data/rules/CustomerRegistered',
      { subject: '/customerId', fields: ['/email'], replacement: { '/email': 'erased@invalid' } },
      DEV_AUTH,
    );
    expect(rule.status).toBe(200);
    expect(
      (await http(server.baseUrl, 'POST', '/api/subjects/c-3/erase', { reason: 'r' }, DEV_AUTH))
        .status,
    ).toBe(200);

    // (which could not find the snapshot of its stream: the row names no subject yet)
    expect((await get('/api/streams/customer-c3/snapshot', DEV_AUTH)).body.snapshot.state).toEqual({
      email: 'carol@legacy.example',
    });

    // When the legacy rows are redacted
    const first = await redact({ messageType: 'CustomerRegistered', batchSize: 2 });

    // Then the counts say what was done, and the scan finds only the row without a subject
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      messageTypes: ['CustomerRegistered'],
      scanned: 4,
      rewritten: 3,
      rewrittenErased: 1,
      alreadySealed: 0,
      withoutPersonalFields: 0,
      unredactable: 1,
      unredactableRows: [{ index: nobody }],
      verification: { clearRows: 1, clearIndices: [nobody], verified: false },
    });
    expect(first.body.unredactableRows[0].reason).toContain('/customerId');
    expect(first.body.batches).toBeGreaterThan(1);
    // The rewritten rows hold no clear value; all but their body, sealed fields and hash is as it was
    const after = await rows();
    for (const [index, clear] of [
      [alice, 'alice@legacy.example'],
      [bob, 'bob@legacy.example'],
      [carol, 'carol@legacy.example'],
    ] as const) {
      expect(before.get(index)!.row).toContain(clear);
      expect(after.get(index)!.row).not.toContain(clear);
      expect(after.get(index)!.kept).toBe(before.get(index)!.kept);
    }
    // and every other row (another type, the stream's other event, the unredactable one) is byte-identical
    for (const [index, row] of before)
      if (![alice, bob, carol].includes(index)) expect(after.get(index)!.row).toBe(row.row);
    expect(after.get(order)!.row).toContain('dora@legacy.example');

    // A reader without the personal scope gets the replacement, one with it the clear value
    const plain = (await get(`/api/events/${alice}`, READER)).body;
    expect(plain.body).toEqual({ customerId: 'c-1', email: 'erased@invalid', plan: 'gold' });
    expect(plain.redacted).toEqual(['/email']);
    const privy = (await get(`/api/events/${alice}`, PRIVY)).body;
    expect(privy.body).toEqual({ customerId: 'c-1', email: 'alice@legacy.example', plan: 'gold' });
    expect(privy.redacted).toBeUndefined();
    expect({ id: privy.id, streamVersion: privy.streamVersion }).toEqual({
      id: alice,
      streamVersion: plain.streamVersion,
    });
    // The stream reads the same, at the same versions
    const stream = (await get('/api/streams/customer-c2', PRIVY)).body.events;
    expect(stream.map((e: { version: number }) => e.version)).toEqual([1, 2]);
    expect(stream[1].data.email).toBe('bob@legacy.example');
    // The erased subject's row shows the replacement to everyone, and no key was made for it
    const erased = (await get(`/api/events/${carol}`, PRIVY)).body;
    expect(erased.body.email).toBe('erased@invalid');
    expect(erased.redacted).toEqual(['/email']);
    // and the snapshot of its stream, which the erasure could not find while the row named no subject, is gone
    expect((await get('/api/streams/customer-c3/snapshot', DEV_AUTH)).body.snapshot).toBeNull();
    const keys = await db.query<{ keys: string }>(
      'SELECT count(*)::text AS keys FROM ordinal_keys.subject_keys WHERE wrapped_key IS NOT NULL',
    );
    expect(keys[0].keys).toBe('2');

    // When it runs again, through the CLI (every type with a rule), nothing is rewritten
    const cli = await runCli(['redact', '--json'], {
      ORDINAL_URL: server.baseUrl,
      ORDINAL_TOKEN: 'dev-ordinal-token',
    });
    // and it exits 6: the row without a subject is still in clear
    expect(cli.code).toBe(6);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      messageTypes: ['CustomerRegistered'],
      rewritten: 0,
      alreadySealed: 3,
      unredactable: 1,
      verification: { clearRows: 1, clearIndices: [nobody] },
    });
    const again = await rows();
    for (const [index, row] of after) expect(again.get(index)!.row).toBe(row.row);
  });

  it('refuses a type without a rule (404) and a caller without admin (403)', async () => {
    const none = await redact({ messageType: 'OrderPlaced' });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('no_personal_data_rule');
    // A name an object inherits is no rule either (the fuzz found a 500 for 'toString')
    for (const inherited of ['toString', 'constructor', 'hasOwnProperty', 'valueOf']) {
      const refused = await redact({ messageType: inherited });
      expect([inherited, refused.status, refused.body.code]).toEqual([
        inherited,
        404,
        'no_personal_data_rule',
      ]);
    }
    expect((await redact({}, READER)).status).toBe(403);
  });

  it('runs one redaction at a time across processes (409 while another holds its lock)', async () => {
    // Given another process's run, holding the redaction's session lock
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1::bigint)', [LOCKS.redact]);
      // When a redaction is asked for, then it is refused and nothing is done
      const busy = await redact({});
      expect(busy.status).toBe(409);
      expect(busy.body.code).toBe('redact_running');
    } finally {
      await other.end();
    }
  });

  it('verifies a type left with no row in clear', async () => {
    // Given a rule for the other type, whose one legacy row names its subject
    const rule = await http(
      server.baseUrl,
      'PUT',
      '/api/personal-data/rules/OrderPlaced',
      { subject: '/orderId', fields: ['/email'] },
      DEV_AUTH,
    );
    expect(rule.status).toBe(200);
    // When it is redacted
    const res = await redact({ messageType: 'OrderPlaced' });
    // Then its row is sealed and the scan finds nothing left in clear
    expect(res.body).toMatchObject({
      messageTypes: ['OrderPlaced'],
      rewritten: 1,
      unredactable: 0,
      verification: { clearRows: 0, clearIndices: [], verified: true },
    });
    const stored = await db.query<{ row: string }>(
      "SELECT m::text AS row FROM messages m WHERE message_type = 'OrderPlaced'",
    );
    expect(stored[0].row).not.toContain('dora@legacy.example');
  });
});
