import type { MessageKeys } from '@ordinal/log';
import type { SourceRead, SourceReader } from './source-reader.js';

/** What a subscription reads its stream through: its own SourceReader, or its group's SharedSource. */
export interface StreamSource {
  readonly watermarked: boolean;
  read(position: number, limit: number): Promise<SourceRead>;
  /** The member `name` runs here from now on (reads through this source). */
  join?(name: string): void;
  /** The member `name` no longer runs here. */
  leave?(name: string): void;
}

/** A member of a group as its shared source sees it. */
export interface SourceMember {
  name: string;
  /** Its test on a message's keys alone (SubscribeOptions.acceptsKeys), if it has one. */
  acceptsKeys?: (keys: MessageKeys) => boolean;
}

interface Page {
  read: Promise<SourceRead>;
  at: number;
}

/** How long a page read for one partition is kept for the others (they read the same range within a batch or two). */
const PAGE_TTL_MS = 5_000;

/** Most rows a keyed read looks at for one page, in pages (a process running 1 of 9 partitions scans 9 × limit). */
const MAX_SCAN_PAGES = 16;

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
 *
 * When this process runs at most three quarters of the members and each of those tests a
 * message by its keys (`acceptsKeys`: a projection partitioned by stream or user), a page is a
 * keyed read (SourceReader.readKeyed): the keys of the rows first, and only the rows a member
 * running here wants are mapped, up to `limit` of them over `limit × members / running` rows.
 * The other processes' rows then cost this one their keys, not their bodies. Such a page is a
 * fact for the members it was read for only, so pages are kept per set of running members.
 */
export class SharedSource implements StreamSource {
  private readonly pages = new Map<string, Page>();
  private readonly running = new Set<string>();

  constructor(
    private readonly source: SourceReader,
    /** Pages kept at most (a few per partition). */
    private readonly capacity: number,
    /** Every member of the group (those running here, and those running elsewhere). */
    private readonly members: SourceMember[] = [],
  ) {}

  get watermarked(): boolean {
    return this.source.watermarked;
  }

  join(name: string): void {
    this.running.add(name);
  }

  leave(name: string): void {
    this.running.delete(name);
  }

  read(position: number, limit: number): Promise<SourceRead> {
    const keyed = this.keyedRead();
    const key = `${position}:${limit}:${keyed?.members ?? '*'}`;
    const now = performance.now();
    let page = this.pages.get(key);
    if (!page || now - page.at >= PAGE_TTL_MS) page = this.fetch(position, limit, key, now, keyed);
    // A full page: the next one is likely there already; read it while this one is applied (one page ahead, no more).
    void page.read.then(
      (read) => {
        if (read.to <= position || (read.messages.length < limit && !read.full)) return;
        const next = `${read.to}:${limit}:${keyed?.members ?? '*'}`;
        if (!this.pages.has(next)) this.fetch(read.to, limit, next, performance.now(), keyed);
      },
      () => undefined,
    );
    return page.read;
  }

  /**
   * The keyed read of the members running here (their names, and the test keeping a row any
   * of them wants), or null when a page must be read whole: every member runs here, one of
   * those running has no test on keys, or the stream is read another way.
   */
  private keyedRead(): {
    members: string;
    keep: (keys: MessageKeys) => boolean;
    scan: number;
  } | null {
    if (!this.source.keyed || this.running.size === 0) return null;
    const tests = this.members.filter((m) => this.running.has(m.name));
    // Reading keys first costs a round trip and about a fifth of a whole row's reading: not
    // worth it when this process wants most of the rows anyway.
    if (tests.length * 4 > this.members.length * 3 || tests.length < this.running.size) return null;
    const keeps = tests.map((m) => m.acceptsKeys);
    if (keeps.some((k) => k === undefined)) return null;
    const checks = keeps as ((keys: MessageKeys) => boolean)[];
    return {
      members: tests.map((m) => m.name).join(','),
      keep: (keys) => checks.some((check) => check(keys)),
      scan: Math.min(this.members.length / tests.length, MAX_SCAN_PAGES),
    };
  }

  private fetch(
    position: number,
    limit: number,
    key: string,
    now: number,
    keyed: ReturnType<SharedSource['keyedRead']>,
  ): Page {
    const page: Page = {
      read: keyed
        ? this.source.readKeyed(position, limit, keyed.keep, Math.ceil(limit * keyed.scan))
        : this.source.read(position, limit),
      at: now,
    };
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
