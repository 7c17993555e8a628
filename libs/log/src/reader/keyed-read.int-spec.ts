import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { SEQUENCE } from '../log.constants.js';
import type { MessageKeys } from '../message.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogReader } from './log-reader.service.js';

/** Users u-0, u-2, u-4, …: the keys a reader of some partitions keeps. */
const even = (keys: MessageKeys) => Number(keys.userId!.slice(2)) % 2 === 0;

/**
 * LogReader.readKeyedUpTo: the keys of a page first, then only the kept rows mapped. The same
 * messages as a whole read filtered by those keys, over the same covered range, with the same
 * watched positions passed (a row of a key not kept is a row, not a hole).
 */
describe('LogReader.readKeyedUpTo (concurrent mode)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let reader: LogReader;
  let drawn: number;
  let head: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startLogContext(db.url, { ordering: 'concurrent', gapTimeoutMs: 60_000 });
    reader = app.get(LogReader);
    const writer = app.get(LogWriter);
    const users = (from: number) =>
      Array.from({ length: 30 }, (_, n) => ({
        messageType: n % 5 === 0 ? 'Other' : 'Tick',
        userId: `u-${from + n}`,
        body: { n: from + n },
        metadata: { m: from + n },
      }));
    await writer.append({ messages: users(0) });
    // A position drawn by a transaction that ended without a row: a hole the watermark passes
    // at once and watches (released exactly).
    const session = new pg.Client({ connectionString: db.url });
    await session.connect();
    drawn = Number(
      (await session.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p,
    );
    await session.end();
    await writer.append({ messages: users(30) });
    head = await reader.safeHead();
    // And a row that arrived late at position 3 (u-2's neighbour u-3: a key not kept), still watched.
    await db.query('INSERT INTO log_skipped (position, held_ms, arrived_at) VALUES (3, 0, now())');
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('gives the kept messages as a whole read maps them, over the same range, with the same holes', async () => {
    // Given the whole read of the log
    const whole = await reader.readUpTo(0, 1000, {}, head);
    expect(head).toBe(61);
    expect(whole.messages).toHaveLength(60);
    // When a keyed read keeps the even users
    const keyed = await reader.readKeyedUpTo(0, 1000, {}, head, even, 1000);
    // Then it has their messages, mapped the same (bodies, metadata, everything), in order
    expect(keyed.messages).toEqual(whole.messages.filter((m) => even(m)));
    expect(keyed.messages).toHaveLength(30);
    // Over the same range, passing the drawn hole and not the late row of a key it did not keep
    expect(keyed.to).toBe(whole.to);
    expect(whole.skipped).toEqual([drawn]);
    expect(keyed.skipped).toEqual([drawn]);
    expect(keyed.full).toBe(false);
  });

  it("filters on the stream's types first, and stops at its limit of kept messages", async () => {
    const typed = await reader.readUpTo(0, 1000, { types: ['Tick'] }, head);
    const keyed = await reader.readKeyedUpTo(0, 5, { types: ['Tick'] }, head, even, 1000);
    const expected = typed.messages.filter((m) => even(m)).slice(0, 5);
    expect(keyed.messages).toEqual(expected);
    // It covers up to its fifth kept message only: what is above is for the next read
    expect(keyed.to).toBe(expected[4].id);
    expect(keyed.full).toBe(true);
  });

  it('stops after `scan` rows, covering up to the last row it looked at, and reads on from there', async () => {
    const pages: number[][] = [];
    for (let after = 0; after < head;) {
      const read = await reader.readKeyedUpTo(after, 1000, {}, head, even, 7);
      expect(read.to).toBeGreaterThan(after);
      pages.push(read.messages.map((m) => m.id));
      after = read.to;
    }
    // The first page looked at rows 1..7 and kept u-0, u-2, u-4, u-6 (positions 1, 3, 5, 7)
    expect(pages[0]).toEqual([1, 3, 5, 7]);
    // And together the pages hold every kept message once, in order
    const whole = await reader.readUpTo(0, 1000, {}, head);
    expect(pages.flat()).toEqual(whole.messages.filter((m) => even(m)).map((m) => m.id));
  });

  it('covers what it looked at when it keeps nothing there', async () => {
    const none = await reader.readKeyedUpTo(0, 1000, {}, head, () => false, 10);
    expect(none).toMatchObject({ messages: [], to: 10, full: true });
    const rest = await reader.readKeyedUpTo(10, 1000, {}, head, () => false, 1000);
    expect(rest).toMatchObject({ messages: [], to: head, full: false });
  });
});
