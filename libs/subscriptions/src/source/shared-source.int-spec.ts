import type { INestApplicationContext } from '@nestjs/common';
import { LogReader, LogWriter, type MessageKeys } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { SharedSource } from './shared-source.js';
import { SourceReader, type SourceRead } from './source-reader.js';

/** A SourceReader over the real log that counts the reads it makes. */
class CountingReader extends SourceReader {
  reads: number[] = [];
  keyedReads: number[] = [];
  override read(position: number, limit: number): Promise<SourceRead> {
    this.reads.push(position);
    return super.read(position, limit);
  }
  override readKeyed(
    position: number,
    limit: number,
    keep: (keys: MessageKeys) => boolean,
    scan: number,
  ): Promise<SourceRead> {
    this.keyedReads.push(position);
    return super.readKeyed(position, limit, keep, scan);
  }
}

/** Member `p<i>` of 6 takes the users u-n with n mod 6 = i. */
const member = (i: number) => ({
  name: `p${i}`,
  acceptsKeys: (keys: Pick<MessageKeys, 'userId'>) => Number(keys.userId!.slice(2)) % 6 === i,
});

describe('SharedSource: the partitions of a projection in one process share one read of the stream', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startProjectionsApp(db.url);
    await app.get(LogWriter).append({
      messages: Array.from({ length: 1200 }, (_, n) => ({
        messageType: 'Tick',
        userId: `u-${n}`,
        body: { n },
      })),
    });
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('reads each page once for 8 partitions (the next one ahead), and every partition sees every page', async () => {
    // Given a shared source over the real reader and 8 partitions reading from 0 in pages of 500
    const reader = new CountingReader({ types: ['Tick'] }, app.get(LogReader), false);
    const shared = new SharedSource(reader, 24);
    const head = await app.get(LogReader).safeHead();
    // When each reads the stream to the head, at its own pace
    const walk = async (partition: number) => {
      const pages: number[][] = [];
      for (let position = 0; position < head;) {
        const read = await shared.read(position, 500);
        pages.push(read.messages.map((m) => m.id));
        position = read.to;
        await new Promise((r) => setTimeout(r, partition)); // a different pace per partition
      }
      return pages;
    };
    const walks = await Promise.all(Array.from({ length: 8 }, (_, p) => walk(p)));
    // Then all saw the same three pages, together every message once per partition
    for (const pages of walks) {
      expect(pages.map((p) => p.length)).toEqual([500, 500, 200]);
      expect(pages.flat()).toEqual(walks[0].flat());
    }
    expect(new Set(walks[0].flat()).size).toBe(1200);
    // And the log was read once per page (0, 500, 1000), not 8 times
    expect([...reader.reads].sort((a, b) => a - b)).toEqual([
      0,
      walks[0][0].at(-1)!,
      walks[0][1].at(-1)!,
    ]);
  });

  it('maps only the rows of the members running here, each getting all of its own in order', async () => {
    // Given a group of 6 members of which 2 run here (each tests a message's keys alone)
    const reader = new CountingReader({ types: ['Tick'] }, app.get(LogReader), false);
    const members = Array.from({ length: 6 }, (_, i) => member(i));
    const shared = new SharedSource(reader, 18, members);
    shared.join('p0');
    shared.join('p3');
    const head = await app.get(LogReader).safeHead();
    // When each reads to the head in pages of 100, keeping its own
    const walk = async (i: number) => {
      const own: number[] = [];
      for (let position = 0; position < head;) {
        const read = await shared.read(position, 100);
        expect(read.messages.length).toBeLessThanOrEqual(100);
        // The page holds only rows of the members running here
        expect(read.messages.every((m) => [0, 3].includes(Number(m.userId!.slice(2)) % 6))).toBe(
          true,
        );
        own.push(...read.messages.filter((m) => members[i].acceptsKeys(m)).map((m) => m.id));
        position = read.to;
      }
      return own;
    };
    const [p0, p3] = await Promise.all([walk(0), walk(3)]);
    // Then each got every message of its users once, in order
    const all = await app.get(LogReader).readUpTo(0, 5000, { types: ['Tick'] }, head);
    for (const [i, got] of [
      [0, p0],
      [3, p3],
    ] as const)
      expect(got).toEqual(all.messages.filter((m) => members[i].acceptsKeys(m)).map((m) => m.id));
    // Through keyed reads shared by both (a third of the rows per page of 100: about 300 scanned)
    expect(reader.reads).toEqual([]);
    expect(reader.keyedReads.length).toBeGreaterThan(1);
    expect(reader.keyedReads.length).toBeLessThan(all.messages.length / 100);
    expect(new Set(reader.keyedReads).size).toBe(reader.keyedReads.length);
  });

  it('reads whole pages when most members run here, or one running has no test on keys', async () => {
    const reader = new CountingReader({ types: ['Tick'] }, app.get(LogReader), false);
    const shared = new SharedSource(reader, 18, [
      ...Array.from({ length: 5 }, (_, i) => member(i)),
      { name: 'p5' },
    ]);
    // 4 of 6 running, each with a test on keys: keyed (the next page is read ahead)
    for (let i = 0; i < 4; i++) shared.join(`p${i}`);
    await shared.read(0, 100);
    expect(reader.keyedReads[0]).toBe(0);
    expect(reader.reads).toEqual([]);
    // 5 of 6: most of the rows are wanted here, whole pages
    shared.join('p4');
    await shared.read(0, 100);
    expect(reader.reads[0]).toBe(0);
    // p5, which has no test on keys, with 3 others: whole pages (the one read for five is kept)
    const keyed = reader.keyedReads.length;
    shared.leave('p4');
    shared.leave('p3');
    shared.join('p5');
    await shared.read(0, 100);
    expect(reader.keyedReads).toHaveLength(keyed);
    expect(reader.reads.filter((p) => p === 0)).toHaveLength(1);
    // p5 leaves: keyed again, for the three running (not the page read for four)
    shared.leave('p5');
    await shared.read(0, 100);
    expect(reader.keyedReads.filter((p) => p === 0)).toHaveLength(2);
  });

  it('does not keep a read that found nothing new: a partition woken by a commit reads afresh', async () => {
    const reader = new CountingReader({ types: ['Tick'] }, app.get(LogReader), false);
    const shared = new SharedSource(reader, 24);
    const head = await app.get(LogReader).safeHead();
    // Given a partition at the head that found nothing
    expect((await shared.read(head, 500)).to).toBe(head);
    // When a message commits and it reads again
    await app
      .get(LogWriter)
      .append({ messages: [{ messageType: 'Tick', userId: 'late', body: {} }] });
    const read = await shared.read(head, 500);
    // Then it gets the new message
    expect(read.messages.map((m) => m.userId)).toEqual(['late']);
    expect(reader.reads).toEqual([head, head]);
  });
});
