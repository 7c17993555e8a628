import type { INestApplicationContext } from '@nestjs/common';
import { LogReader, LogWriter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { SharedSource } from './shared-source.js';
import { SourceReader, type SourceRead } from './source-reader.js';

/** A SourceReader over the real log that counts the reads it makes. */
class CountingReader extends SourceReader {
  reads: number[] = [];
  override read(position: number, limit: number): Promise<SourceRead> {
    this.reads.push(position);
    return super.read(position, limit);
  }
}

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
