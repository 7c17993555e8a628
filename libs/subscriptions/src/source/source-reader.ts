import { LogReader, type StoredMessage } from '@ordinal/log';
import { execute, toPosition } from '@ordinal/log/internal';
import type { DataSource } from 'typeorm';
import { readSkippedBetween } from '../sql/index.js';
import { isCategoryStream, streamTypes, type SubscriptionStream } from './subscription-stream.js';

/** One read of a subscription's stream: the messages, and the position the read covers. */
export interface SourceRead {
  messages: StoredMessage[];
  /** Every matching message in (from, to] is in `messages`; the checkpoint may move to `to`. */
  to: number;
  /** Abandoned positions in (from, to] the read passed without a row (possible late arrivals). */
  skipped: number[];
  /** Snapshot xmax when `skipped` was read: their writers all have lower transaction ids. */
  xmax: string;
}

/**
 * Reads a stream from a position. `$all` and type streams read up to the safe head (the low
 * watermark in concurrent mode); a category stream reads its rows without an upper bound
 * and moves over the empty tail only up to the safe head taken before its read.
 */
export class SourceReader {
  constructor(
    private readonly stream: SubscriptionStream,
    private readonly reader: LogReader,
    private readonly dataSource: DataSource,
    private readonly concurrent: boolean,
  ) {}

  /** Whether reads wait at the watermark (multi-category in concurrent mode). */
  get watermarked(): boolean {
    return this.concurrent && !isCategoryStream(this.stream);
  }

  async read(position: number, limit: number): Promise<SourceRead> {
    // The safe head first: everything at or below it was final before the page was read.
    const head = await this.reader.safeHead();
    if (isCategoryStream(this.stream)) {
      const messages = await this.reader.pageCategory(this.stream.category, position + 1, limit);
      const last = messages.at(-1)?.id ?? position;
      const to = messages.length === limit ? last : Math.max(last, head, position);
      return { messages, to, skipped: [], xmax: '0' };
    }
    if (head <= position) return { messages: [], to: position, skipped: [], xmax: '0' };
    const messages = await this.reader.page(position + 1, limit, { types: streamTypes(this.stream) }, head);
    const to = messages.length === limit ? messages[limit - 1].id : head;
    if (!this.concurrent) return { messages, to, skipped: [], xmax: '0' };
    const rows = await execute<{ position: string; xmax: string }>(this.dataSource.manager, readSkippedBetween(position, to));
    const seen = new Set(messages.map((m) => m.id));
    const skipped = rows.map((r) => toPosition(r.position)).filter((p) => !seen.has(p));
    return { messages, to, skipped, xmax: rows[0]?.xmax ?? '0' };
  }
}
