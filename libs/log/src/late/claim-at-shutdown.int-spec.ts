import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { waitFor } from '@ordinal/test-support/test-server';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from '../reader/log-reader.service.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';

/**
 * A re-scan in flight when the process shuts down may commit its claim (the positions marked
 * arrived): the shutdown waits for its answer, so the process that claimed them counts them
 * and tells its readers. Before, the pool closed under it: the rows were marked arrived and
 * counted by no process.
 */
describe('A late-arrival claim in flight at shutdown', () => {
  let db: TestDatabase;
  let context: INestApplicationContext | null = null;
  const clients: pg.Client[] = [];

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await context?.close();
    context = null;
    await db.drop();
  });

  const session = async () => {
    const client = new pg.Client({ connectionString: db.url, application_name: 'by-hand' });
    await client.connect();
    clients.push(client);
    return client;
  };

  it('is answered before the shutdown ends, and counted', async () => {
    // Given an abandoned hole whose row has committed since (a late arrival not claimed yet)
    // and a watermark that wrote its position down (its shutdown has nothing else to write)
    context = await startLogContext(db.url, {
      ordering: 'concurrent',
      gapTimeoutMs: 100,
      exactRelease: false,
      lateRescanMs: 60_000,
    });
    const watermark = context.get(LogWatermark);
    const reader = context.get(LogReader);
    const writer = await session();
    await writer.query('BEGIN');
    await writer.query('SELECT pg_current_xact_id()');
    const { rows } = await writer.query<{ index: number }>(
      `INSERT INTO messages (index, message_type, body, content_hash)
       VALUES (nextval('messages_index_seq'), 'Held', '{}'::jsonb, 'h') RETURNING index::int AS index`,
    );
    const position = rows[0].index;
    const [above] = (
      await context.get(LogWriter).append({ messages: [{ messageType: 'Above', body: {} }] })
    ).entries;
    if (above.status !== 'created') throw new Error('the message above was not created');
    await waitFor(
      async () => {
        const head = await reader.safeHead();
        const [row] = await db.query<{ p: string }>(
          'SELECT position::text AS p FROM log_watermark WHERE id = 1',
        );
        return head >= above.message.id && Number(row.p) >= head;
      },
      5000,
      'the hole to be abandoned and the watermark written down',
    );
    await reader.safeHead();
    await writer.query('COMMIT');
    // When a re-scan's claim waits on a lock on that position's record
    const locker = await session();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM log_skipped WHERE position = $1 FOR UPDATE', [position]);
    const claim = watermark.rescanLate();
    await waitFor(
      async () =>
        (
          await db.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%SET arrived_at%'`,
          )
        )[0].n === '1',
      5000,
      'the claim to wait on the lock',
    );
    // And the process starts to shut down
    let ended = false;
    const shutdown = watermark.onApplicationShutdown().then(() => (ended = true));
    await locker.query('SELECT 1');
    const endedBeforeTheClaim = ended;
    await locker.query('COMMIT');
    await shutdown;
    // Then the shutdown waited for the claim, which this process counted
    expect(endedBeforeTheClaim).toBe(false);
    expect(await claim).toEqual([position]);
    expect(watermark.counters.lateArrivals).toBe(1);
  });
});
