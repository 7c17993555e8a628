import type { SourceRead, SourceReader } from './source-reader.js';

/** What a subscription reads its stream through: its own SourceReader, or its group's SharedSource. */
export interface StreamSource {
  readonly watermarked: boolean;
  read(position: number, limit: number): Promise<SourceRead>;
}

interface Page {
  read: Promise<SourceRead>;
  at: number;
}

/** How long a page read for one partition is kept for the others (they read the same range within a batch or two). */
const PAGE_TTL_MS = 5_000;

/**
 * One read of the stream for every partition of a projection that this process runs: the
 * partitions of a group read the same stream from (mostly) the same positions, each keeping
 * only its own keys, so a page read for one is kept and handed to the others instead of each
 * reading the whole stream again (8 partitions used to read it 8 times). A page that moved a
 * partition forward is kept (a few per partition, for a few seconds), and the partitions that
 * read it move to the same `to` and ask for the same next page, which is in flight already: a
 * full page starts the read of the next one at once (read-ahead), so a partition's handlers
 * run while its next page is being read. A read that found nothing new is not kept, so a
 * partition woken by a commit reads afresh. Sharing is safe because a covered read is a fact
 * about the log that stays true: every matching message in (from, to] is in it.
 */
export class SharedSource implements StreamSource {
  private readonly pages = new Map<string, Page>();

  constructor(
    private readonly source: SourceReader,
    /** Pages kept at most (a few per partition). */
    private readonly capacity: number,
  ) {}

  get watermarked(): boolean {
    return this.source.watermarked;
  }

  read(position: number, limit: number): Promise<SourceRead> {
    const key = `${position}:${limit}`;
    const now = performance.now();
    let page = this.pages.get(key);
    if (!page || now - page.at >= PAGE_TTL_MS) page = this.fetch(position, limit, key, now);
    // A full page: the next one is likely there already; read it while this one is applied (one page ahead, no more).
    void page.read.then(
      (read) => {
        if (read.to <= position || read.messages.length < limit) return;
        const next = `${read.to}:${limit}`;
        if (!this.pages.has(next)) this.fetch(read.to, limit, next, performance.now());
      },
      () => undefined,
    );
    return page.read;
  }

  private fetch(position: number, limit: number, key: string, now: number): Page {
    const page: Page = { read: this.source.read(position, limit), at: now };
    this.pages.set(key, page);
    this.trim(now);
    page.read.then(
      (read) => {
        // Nothing new: not kept (the next reader, woken by a commit, must read afresh).
        if (read.to <= position && this.pages.get(key) === page) this.pages.delete(key);
      },
      () => {
        if (this.pages.get(key) === page) this.pages.delete(key);
      },
    );
    return page;
  }

  private trim(now: number): void {
    for (const [key, page] of this.pages) {
      if (this.pages.size <= this.capacity && now - page.at < PAGE_TTL_MS) continue;
      this.pages.delete(key);
    }
  }
}
