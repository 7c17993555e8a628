import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';

/**
 * Issue 23: the duplicate window skips a resend, not a genuine event that happens to have the
 * same body. A resend is the same message type, user id, content and metadata (compared in
 * canonical JSON); a message with an idempotency key is left to the key.
 */
describe('the duplicate window compares what identifies a resend (L7)', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const publish = (message: Record<string, unknown>, headers?: Record<string, string>) =>
    http(server.baseUrl, 'PUT', '/api/events/message', message, headers);
  const stored = async (messageType: string) =>
    (
      await db.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE message_type = $1', [
        messageType,
      ])
    )[0].n;

  it('stores two events of different types with the same body', async () => {
    // Given a book returned
    const returned = await publish({ messageType: 'BookReturned', content: { bookId: 'b-1' } });
    // When the same book is then lost
    const lost = await publish({ messageType: 'BookLost', content: { bookId: 'b-1' } });
    // Then both are stored
    expect([returned.status, lost.status]).toEqual([201, 201]);
    expect([await stored('BookReturned'), await stored('BookLost')]).toEqual(['1', '1']);
  });

  it('stores the same body from two users', async () => {
    const alice = await publish({ messageType: 'Ping', userId: 'alice', content: { n: 1 } });
    const bob = await publish({ messageType: 'Ping', userId: 'bob', content: { n: 1 } });
    expect([alice.status, bob.status]).toEqual([201, 201]);
    expect(await stored('Ping')).toBe('2');
  });

  it('stores the same body with other metadata', async () => {
    const first = await publish({
      messageType: 'Tagged',
      content: { n: 1 },
      metadata: { source: 'a' },
    });
    const second = await publish({
      messageType: 'Tagged',
      content: { n: 1 },
      metadata: { source: 'b' },
    });
    expect([first.status, second.status]).toEqual([201, 201]);
  });

  it('stores both messages of a batch with the same body and another type', async () => {
    const res = await http(server.baseUrl, 'POST', '/api/events/messages', {
      messages: [
        { messageType: 'ShelfChecked', content: { shelf: 7 } },
        { messageType: 'ShelfCleaned', content: { shelf: 7 } },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.messages.map((m: { status: string }) => m.status)).toEqual([
      'created',
      'created',
    ]);
  });

  it('stores a repeated message that carries a fresh idempotency key', async () => {
    // Given a message stored without a key
    const first = await publish({ messageType: 'Fee', userId: 'carol', content: { cents: 50 } });
    // When the same message comes with a key of its own, as a header or as a field
    const byHeader = await publish(
      { messageType: 'Fee', userId: 'carol', content: { cents: 50 } },
      { authorization: 'Bearer dev-ordinal-token', 'idempotency-key': 'fee-2' },
    );
    const byField = await publish({
      messageType: 'Fee',
      userId: 'carol',
      content: { cents: 50 },
      idempotencyKey: 'fee-3',
    });
    // Then each is stored: the key, not the window, decides
    expect([first.status, byHeader.status, byField.status]).toEqual([201, 201, 201]);
    expect(await stored('Fee')).toBe('3');
  });

  it('still skips a true resend: same type, user, content and metadata, no key', async () => {
    const message = {
      messageType: 'BookBorrowed',
      userId: 'dave',
      content: { bookId: 'b-2', until: '2026-12-24' },
      metadata: { source: 'desk', desk: 3 },
    };
    const first = await publish(message);
    // The same message, its objects' keys in another order (canonical JSON is compared)
    const resend = await publish({
      ...message,
      content: { until: '2026-12-24', bookId: 'b-2' },
      metadata: { desk: 3, source: 'desk' },
    });
    expect(first.status).toBe(201);
    expect(resend.status).toBe(202);
    expect(resend.body).toMatchObject({
      status: 'duplicate',
      contentHash: first.body.contentHash,
    });
    expect(await stored('BookBorrowed')).toBe('1');
  });

  it('compares the same way after a restart (the window is reloaded from the log)', async () => {
    // Given a message stored before a restart
    const before = await publish({ messageType: 'CardIssued', userId: 'erin', content: { c: 1 } });
    expect(before.status).toBe(201);
    await server.close();
    server = await startServer(db.url);
    // When the same body comes with another type, then as a true resend
    const other = await publish({ messageType: 'CardRevoked', userId: 'erin', content: { c: 1 } });
    const resend = await publish({ messageType: 'CardIssued', userId: 'erin', content: { c: 1 } });
    // Then the first is stored and the resend skipped
    expect([other.status, resend.status]).toEqual([201, 202]);
  });
});
