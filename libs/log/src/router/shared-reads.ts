import type { CoveredRead } from '../reader/log-reader.service.js';
import type { ReadFilter } from '../sql/index.js';

/** One read of the database, shared by every feed that asks for the same page. */
interface SharedRead {
  readonly upTo: number;
  readonly limit: number;
  readonly maxBytes: number;
  readonly result: Promise<CoveredRead>;
  settled: boolean;
}

/** Pages kept after they are read, for feeds a little behind (about 16 × 1,000 messages). */
const KEPT_PAGES = 16;
/** A kept page is dropped this long after it was read. */
const KEPT_MS = 2000;

/**
 * Catch-up reads shared between feeds (R2): feeds replaying the same range (ten streams from
 * index 1, say) ask for the same page after the same position, and the database reads it once.
 * A read in flight is joined; a finished one is kept for a short while (KEPT_PAGES, KEPT_MS)
 * for feeds just behind. A read serves another feed only when it covers what that feed asks
 * for: its upper bound at least the feed's, or a full page (it stopped at its limit, not at
 * its bound). The answer is cut to the asker's bound, so a feed never passes a position above
 * the safe head it read. Rows below a safe head are final; a late arrival in a hole the shared
 * read passed is found by the late watch, exactly as for a read of one's own.
 */
export class SharedReads {
  private readonly reads = new Map<string, SharedRead[]>();
  private readonly order: { key: string; read: SharedRead; at: number }[] = [];
  /** Reads answered from another feed's read. */
  shared = 0;
  private timer: NodeJS.Timeout | null = null;

  /** A covered read after `after` up to `upTo`: another feed's when one covers it, else `read()`. */
  read(
    after: number,
    limit: number,
    filter: Pick<ReadFilter, 'types' | 'tenant'>,
    upTo: number,
    rendered: boolean,
    maxBytes: number,
    read: () => Promise<CoveredRead>,
  ): Promise<CoveredRead> {
    this.expire();
    const key = `${after}|${rendered ? 'r' : 'm'}|${(filter.types ?? []).join(',')}|${filter.tenant ?? ''}`;
    for (const candidate of this.reads.get(key) ?? []) {
      if (candidate.limit !== limit || candidate.maxBytes !== maxBytes) continue;
      // A read with a lower bound serves only if it turns out a full page: wait for those that have finished.
      if (candidate.upTo < upTo && !candidate.settled) continue;
      // Full: it stopped at its row or byte limit, before its bound, so it covers what it has whatever the asker's bound.
      const usable = candidate.result.then((result) =>
        candidate.upTo >= upTo || result.messages.length >= limit || result.to < candidate.upTo
          ? cut(result, upTo)
          : null,
      );
      this.shared++;
      return usable.then((result) => {
        if (result !== null) return result;
        this.shared--;
        return this.start(key, limit, maxBytes, upTo, read);
      });
    }
    return this.start(key, limit, maxBytes, upTo, read);
  }

  private start(
    key: string,
    limit: number,
    maxBytes: number,
    upTo: number,
    read: () => Promise<CoveredRead>,
  ): Promise<CoveredRead> {
    const entry: SharedRead = { upTo, limit, maxBytes, result: read(), settled: false };
    entry.result.then(
      () => (entry.settled = true),
      () => this.remove(key, entry),
    );
    const list = this.reads.get(key);
    if (list) list.push(entry);
    else this.reads.set(key, [entry]);
    this.order.push({ key, read: entry, at: Date.now() });
    while (this.order.length > KEPT_PAGES) {
      const oldest = this.order.shift()!;
      this.remove(oldest.key, oldest.read);
    }
    this.schedule();
    return entry.result;
  }

  private expire(): void {
    const now = Date.now();
    while (
      this.order.length > 0 &&
      this.order[0].read.settled &&
      now - this.order[0].at > KEPT_MS
    ) {
      const oldest = this.order.shift()!;
      this.remove(oldest.key, oldest.read);
    }
  }

  /** Kept pages go after KEPT_MS even when no feed reads any more (an idle server holds none). */
  private schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.expire();
      if (this.order.length > 0) this.schedule();
    }, KEPT_MS);
    this.timer.unref();
  }

  private remove(key: string, read: SharedRead): void {
    const list = this.reads.get(key);
    if (!list) return;
    const at = list.indexOf(read);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.reads.delete(key);
  }

  /** Drops every kept page (shutdown). */
  clear(): void {
    this.reads.clear();
    this.order.length = 0;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Pages kept now (tests, metrics). */
  get kept(): number {
    return this.order.length;
  }
}

/** A covered read cut to `upTo` (the asker's bound, at or below the read's own). */
function cut(result: CoveredRead, upTo: number): CoveredRead {
  if (result.to <= upTo) return result;
  let end = result.messages.length;
  while (end > 0 && result.messages[end - 1].id > upTo) end--;
  return {
    messages: end === result.messages.length ? result.messages : result.messages.slice(0, end),
    to: upTo,
    skipped: result.skipped.filter((p) => p <= upTo),
    xmax: result.xmax,
  };
}
