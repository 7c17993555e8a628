import { qualify, type CoveredRead, type LogReader, type MessageKeys } from '@ordinal/log';
import { isCategoryStream, streamTypes, type SubscriptionStream } from './subscription-stream.js';

/**
 * One read of a subscription's stream: the messages, and the position the read covers.
 * `full`: a keyed read stopped at its limit or its scan, so more may follow at once.
 */
export type SourceRead = CoveredRead & { full?: boolean };

/**
 * Reads a stream from a position. `$all` and type streams read up to the safe head (the low
 * watermark in concurrent mode); a category stream reads its rows without an upper bound
 * and moves over the empty tail only up to the safe head taken before its read.
 */
export class SourceReader {
  constructor(
    private readonly stream: SubscriptionStream,
    private readonly reader: LogReader,
    private readonly concurrent: boolean,
    /** Only this tenant's messages (a tenant's category is stored qualified: `<tenant>/<category>`). */
    private readonly tenant?: string,
  ) {}

  /** Whether reads wait at the watermark (multi-category in concurrent mode). */
  get watermarked(): boolean {
    return this.concurrent && !isCategoryStream(this.stream);
  }

  async read(position: number, limit: number): Promise<SourceRead> {
    // The safe head first: everything at or below it was final before the page was read.
    const head = await this.reader.safeHead();
    if (isCategoryStream(this.stream)) {
      const messages = await this.reader.pageCategory(
        qualify(this.tenant, this.stream.category),
        position + 1,
        limit,
        this.tenant,
      );
      const last = messages.at(-1)?.id ?? position;
      const to = messages.length === limit ? last : Math.max(last, head, position);
      return { messages, to, skipped: [], xmax: '0' };
    }
    const filter = { types: streamTypes(this.stream), tenant: this.tenant };
    return this.reader.readUpTo(position, limit, filter, head);
  }

  /** Whether `readKeyed` can read this stream (not a category: that reads its own way). */
  get keyed(): boolean {
    return !isCategoryStream(this.stream);
  }

  /**
   * `read`, mapping only the rows `keep` wants by their keys, at most `limit` of them among up
   * to `scan` rows (LogReader.readKeyedUpTo). Only where `keyed`.
   */
  async readKeyed(
    position: number,
    limit: number,
    keep: (keys: MessageKeys) => boolean,
    scan: number,
  ): Promise<SourceRead> {
    const head = await this.reader.safeHead();
    const filter = { types: streamTypes(this.stream), tenant: this.tenant };
    return this.reader.readKeyedUpTo(position, limit, filter, head, keep, scan);
  }
}
