import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer } from '../support/test-server.js';

describe('restart (L6, L7)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('keeps counting after a restart, writes a new StartMarker and reloads the duplicate window', async () => {
    // Given a server that stored two messages, then stopped
    const first = await startServer(db.url);
    const a = await http(first.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderPlaced',
      content: { orderId: 'same' },
    });
    const b = await http(first.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'OrderPlaced',
      content: { orderId: 'other' },
    });
    expect([a.status, b.status]).toEqual([201, 201]);
    await first.close();

    // When it starts again
    const second = await startServer(db.url);
    try {
      // Then a new StartMarker follows the old messages
      const markers = await db.query<{ index: string }>(
        'SELECT index FROM messages WHERE message_type = $1 ORDER BY index',
        ['StartMarker'],
      );
      expect(markers.map((m) => Number(m.index))).toEqual([1, 4]);
      // And a body stored before the restart is still remembered by the window
      const repeat = await http(second.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'OrderPlaced',
        content: { orderId: 'same' },
      });
      expect(repeat.status).toBe(202);
      // And indices continue after the marker
      const next = await http(second.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'OrderPlaced',
        content: { orderId: 'new' },
      });
      expect(next.status).toBe(201);
      expect(next.body.id).toBe(5);
    } finally {
      await second.close();
    }
  });

  it('switches from gapless to concurrent mode when gapless mode wrote exactly one row (its StartMarker)', async () => {
    // Given a database on which a gapless server started once and stored nothing else
    const fresh = await createTestDatabase('ordinal_restart_switch');
    try {
      const gapless = await startServer(fresh.url);
      await gapless.close();
      expect((await fresh.query<{ n: string }>('SELECT count(*) AS n FROM messages'))[0].n).toBe(
        '1',
      );
      // When it restarts in concurrent mode
      const concurrent = await startServer(fresh.url, { ORDINAL_ORDERING: 'concurrent' });
      try {
        // Then the sequence does not hand out the position gapless mode used: its own marker and a publish land after it
        const sent = await http(concurrent.baseUrl, 'PUT', '/api/events/message', {
          messageType: 'OrderPlaced',
          content: { orderId: 'after-switch' },
        });
        expect(sent.status).toBe(201);
        const rows = await fresh.query<{ index: string; message_type: string }>(
          'SELECT index, message_type FROM messages ORDER BY index',
        );
        expect(rows.map((r) => [Number(r.index), r.message_type])).toEqual([
          [1, 'StartMarker'],
          [2, 'StartMarker'],
          [3, 'OrderPlaced'],
        ]);
      } finally {
        await concurrent.close();
      }
    } finally {
      await fresh.drop();
    }
  });

  it('forgets the window after N messages, and N=0 turns it off', async () => {
    // Given a window of 2
    const server = await startServer(db.url, { ORDINAL_DUPLICATE_WINDOW: '2' });
    try {
      const send = (orderId: string) =>
        http(server.baseUrl, 'PUT', '/api/events/message', {
          messageType: 'W',
          content: { orderId },
        });
      expect((await send('w1')).status).toBe(201);
      expect((await send('w1')).status).toBe(202);
      expect((await send('w2')).status).toBe(201);
      // When two messages have been ingested, the check is off until the next start
      expect((await send('w1')).status).toBe(201);
    } finally {
      await server.close();
    }
    const off = await startServer(db.url, { ORDINAL_DUPLICATE_WINDOW: '0' });
    try {
      const send = () =>
        http(off.baseUrl, 'PUT', '/api/events/message', {
          messageType: 'W',
          content: { orderId: 'w9' },
        });
      expect((await send()).status).toBe(201);
      expect((await send()).status).toBe(201);
    } finally {
      await off.close();
    }
  });
});
