import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { watchFlushes } from '@ordinal/test-support/watch-flushes';
import { LogWriter } from './log-writer.service.js';
import type { AppendEntry, AppendRequest } from '../message.js';
import type { Ordering } from '../log-options.js';

const statuses = (entries: AppendEntry[]) => entries.map((e) => e.status);
const indexOf = (entry: AppendEntry) => (entry.status === 'duplicate' ? -1 : entry.message.id);

/**
 * Issue 30: across a network every statement of an append is a round trip. A publish with an
 * idempotency key took a transaction of five (BEGIN, the lock, the keys read, INSERT, COMMIT)
 * in both modes. A new key (the usual case: a resend is the exception) is now checked under
 * the lock in the one statement that inserts; a key already stored sends the flush to the
 * transaction, which answers the repeat.
 */
describe.each<Ordering>(['gapless', 'concurrent'])(
  'a publish with an idempotency key (%s)',
  (ordering) => {
    let db: TestDatabase;
    let context: INestApplicationContext;
    let writer: LogWriter;
    let watch: ReturnType<typeof watchFlushes>;

    beforeAll(async () => {
      db = await createTestDatabase();
      context = await startLogContext(db.url, {
        ordering,
        startMarker: false,
        gapTimeoutMs: 60_000,
      });
      writer = context.get(LogWriter);
      watch = watchFlushes(context.get(DataSource));
    });
    beforeEach(() => {
      watch.leases.length = 0;
    });
    afterAll(async () => {
      watch?.stop();
      await context?.close();
      await db?.drop();
    });

    const publish = (keys: string[], request: Partial<AppendRequest> = {}) =>
      writer.append({
        messages: keys.map((idempotencyKey, i) => ({
          messageType: 'Paid',
          body: { i, idempotencyKey },
          idempotencyKey,
        })),
        ...request,
      });

    const stored = async (key: string) =>
      (
        await db.query<{ index: string }>(
          'SELECT index::text FROM messages WHERE idempotency_key = $1',
          [key],
        )
      ).map((r) => Number(r.index));

    it('stores a message with a new key in one statement', async () => {
      // When a message with a key never used is published
      const result = await publish(['pay-1']);
      // Then it is stored, in one statement on one leased connection (no BEGIN, no read first)
      expect(statuses(result.entries)).toEqual(['created']);
      expect(await stored('pay-1')).toEqual([indexOf(result.entries[0])]);
      expect(watch.leases).toHaveLength(1);
      expect(watch.leases[0]).toHaveLength(1);
      expect(watch.leases[0][0]).not.toMatch(/^BEGIN/);
    });

    it('answers a resend with the stored message: the statement changes nothing, the transaction reads the repeat', async () => {
      // Given a message stored under a key
      const first = await publish(['pay-2']);
      watch.leases.length = 0;
      // When it is sent again
      const again = await publish(['pay-2']);
      // Then it is the repeat of the stored one, and nothing more is stored
      expect(statuses(again.entries)).toEqual(['repeat']);
      expect(indexOf(again.entries[0])).toBe(indexOf(first.entries[0]));
      expect(await stored('pay-2')).toEqual([indexOf(first.entries[0])]);
      // And the one statement was tried first, then the transaction decided
      expect(watch.leases.length).toBe(2);
      expect(watch.leases[0]).toHaveLength(1);
      expect(watch.leases[1][0]).toMatch(/^BEGIN/);
    });

    it('stores a batch of new keys with a key repeated inside it in one statement, the second its repeat', async () => {
      // When a batch holds two new keys, one of them twice
      const result = await publish(['pay-3', 'pay-4', 'pay-3']);
      // Then the first of each key is stored and the second is the first's repeat, in one statement
      expect(statuses(result.entries)).toEqual(['created', 'created', 'repeat']);
      expect(indexOf(result.entries[2])).toBe(indexOf(result.entries[0]));
      expect(await stored('pay-3')).toEqual([indexOf(result.entries[0])]);
      expect(watch.leases).toHaveLength(1);
      expect(watch.leases[0]).toHaveLength(1);
    });

    it('appends to a stream at its expected version with a new key in one statement; a stored key at the stream’s version is its repeat', async () => {
      // When an aggregate appends with an expected version and an idempotency key
      const result = await publish(['order-7-placed'], {
        stream: { streamId: 'order-7', expectedVersion: 'no_stream' },
      });
      // Then it is stored at version 1 in one statement
      expect(statuses(result.entries)).toEqual(['created']);
      expect(result.streamVersion).toBe(1);
      expect(watch.leases).toHaveLength(1);
      expect(watch.leases[0]).toHaveLength(1);
      // And an append at the version it reached with the stored key is the key's repeat,
      // decided by the transaction after the statement changed nothing; the stream stays at 1
      watch.leases.length = 0;
      const again = await publish(['order-7-placed'], {
        stream: { streamId: 'order-7', expectedVersion: 1 },
      });
      expect(statuses(again.entries)).toEqual(['repeat']);
      expect(indexOf(again.entries[0])).toBe(indexOf(result.entries[0]));
      expect(watch.leases).toHaveLength(2);
      const [{ version }] = await db.query<{ version: string }>(
        `SELECT version::text FROM streams WHERE stream_id = 'order-7'`,
      );
      expect(version).toBe('1');
    });

    it('stores a key once when two flushes race with it', async () => {
      // When the same new key is published from many appends at once (several flushes)
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          publish(['pay-race'], i % 2 === 0 ? {} : { inOrder: true }),
        ),
      );
      // Then exactly one stored it and every other answer is its repeat
      const entries = results.map((r) => r.entries[0]);
      expect(entries.filter((e) => e.status === 'created')).toHaveLength(1);
      const [index] = await stored('pay-race');
      expect(entries.every((e) => indexOf(e) === index)).toBe(true);
      expect(await stored('pay-race')).toEqual([index]);
    });

    it('stores a key once when flushes of different categories race with it, and answers the others as its repeat', async () => {
      // When appends to streams of twelve categories (whose flushes do not wait for each other
      // in concurrent mode) send the same key and message at once
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          writer.append({
            stream: { streamId: `race${i}-1`, expectedVersion: 'no_stream' },
            messages: [{ messageType: 'Paid', body: { order: 1 }, idempotencyKey: 'pay-x' }],
          }),
        ),
      );
      // Then one stored it; every other is its repeat or a typed refusal, never a driver error
      const [index] = await stored('pay-x');
      expect(await stored('pay-x')).toEqual([index]);
      const created = results.filter(
        (r) => r.status === 'fulfilled' && r.value.entries[0].status === 'created',
      );
      expect(created).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'fulfilled') expect(indexOf(r.value.entries[0])).toBe(index);
        else expect((r.reason as Error).name).not.toMatch(/QueryFailed|DatabaseError/);
      }
    });
  },
);
