import { randomBytes } from 'node:crypto';
import { PersonalData } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

/**
 * Issue 25, the catch-up of a reader with the `personal` scope: the sealed fields opened into
 * the JSON PostgreSQL rendered (spliced, not parsed and written back), the keys of a page's
 * subjects read in one key-store query, and an erasure between two catch-ups honoured by the
 * second whatever the first put in memory.
 */
describe('personal data in an SSE catch-up', () => {
  const READER = { authorization: 'Bearer reader-secret' };
  const PRIVY = { authorization: 'Bearer privy-secret' };
  const SUBJECTS = 60;
  let db: TestDatabase;
  let server: TestServer;
  let last = 0;

  const catchUp = async (headers: Record<string, string>) => {
    const sse = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=1&endIndex=${last}&types=CustomerRegistered`,
      headers,
    );
    await sse.waitFor(() => sse.events.some((e) => e.event === 'stream-ended'));
    sse.close();
    return sse.events
      .filter((e) => e.event === 'message')
      .map((e) => e.data.message as Record<string, unknown> & { body: Record<string, unknown> });
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'reader:reader-secret:read;privy:privy-secret:read+personal',
      ORDINAL_MASTER_KEY: randomBytes(32).toString('base64'),
    });
    const rule = await http(
      server.baseUrl,
      'PUT',
      '/api/personal-data/rules/CustomerRegistered',
      { subject: '/customerId', fields: ['/email', '/address'], replacement: { '/email': '-' } },
      DEV_AUTH,
    );
    expect(rule.status).toBe(200);
    // Three messages per subject, values that need escaping among them
    for (let round = 0; round < 3; round++) {
      const published = await http(
        server.baseUrl,
        'POST',
        '/api/events/messages',
        {
          messages: Array.from({ length: SUBJECTS }, (_, n) => ({
            messageType: 'CustomerRegistered',
            content: {
              customerId: `s-${n}`,
              email: `p${n}.${round}@example.com`,
              address: { street: `${n} "Long" Road\n`, city: 'Lyon', zip: n },
              plan: 'gold',
            },
          })),
        },
        DEV_AUTH,
      );
      expect(published.status).toBe(201);
    }
    last = Number(
      (await db.query<{ h: string }>('SELECT max(index)::text AS h FROM messages'))[0].h,
    );
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('opens every sealed field, and the rest is what every reader gets', async () => {
    // Given readers with and without the personal scope
    const [plain, privy] = await Promise.all([catchUp(READER), catchUp(PRIVY)]);
    // Then the personal reader gets the clear values, without `redacted`, and otherwise the same message
    expect(privy).toHaveLength(3 * SUBJECTS);
    privy.forEach((message, i) => {
      const n = Number(String(message.body.customerId).slice(2));
      expect(message.body.email).toMatch(new RegExp(`^p${n}\\.[0-2]@example\\.com$`));
      expect(message.body.address).toEqual({ street: `${n} "Long" Road\n`, city: 'Lyon', zip: n });
      const { redacted, ...rest } = plain[i];
      expect(redacted).toEqual(['/email', '/address']);
      expect(plain[i].body.email).toBe('-');
      expect(message).toEqual({ ...rest, body: message.body });
      expect(Object.keys(message.body)).toEqual(Object.keys(plain[i].body));
    });
  });

  it('reads the keys of a page’s subjects in one key-store query, not one per subject', async () => {
    // Given a process that holds no subject's key in memory
    const personal = server.app.get(PersonalData);
    personal.forgetKeys();
    const store = (personal as unknown as { store: { query: (...args: unknown[]) => unknown } })
      .store;
    const query = store.query;
    let queries = 0;
    store.query = (...args: unknown[]) => (queries++, query.apply(store, args));
    try {
      // When a personal reader catches up over every subject
      const privy = await catchUp(PRIVY);
      // Then every message is in clear, and the keys came in a query per page (the whole range here)
      expect(privy.every((m) => String(m.body.email).endsWith('@example.com'))).toBe(true);
      expect(queries).toBeGreaterThanOrEqual(1);
      expect(queries).toBeLessThanOrEqual(2);
    } finally {
      store.query = query;
    }
  });

  it('shows an erased subject’s replacements to the next catch-up, whatever the last one loaded', async () => {
    // Given a catch-up that loaded every subject's key into memory
    expect((await catchUp(PRIVY)).filter((m) => m.body.customerId === 's-7')[0].body.email).toMatch(
      /@example\.com$/,
    );
    // When s-7 is erased
    const erased = await http(
      server.baseUrl,
      'POST',
      '/api/subjects/s-7/erase',
      { reason: 'test' },
      DEV_AUTH,
    );
    expect(erased.status).toBe(200);
    // Then the next catch-up shows s-7's replacements and `redacted`, every other subject in clear
    const after = await catchUp(PRIVY);
    const seven = after.filter((m) => m.body.customerId === 's-7');
    expect(seven).toHaveLength(3);
    for (const m of seven) {
      expect(m.body.email).toBe('-');
      expect(m.body.address).toBeNull();
      expect(m.redacted).toEqual(['/email', '/address']);
    }
    const others = after.filter((m) => m.body.customerId !== 's-7');
    expect(others.every((m) => String(m.body.email).endsWith('@example.com'))).toBe(true);
    expect(others.every((m) => m.redacted === undefined)).toBe(true);
  });
});
