import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MessageKeys, StoredMessage } from '../message.js';
import {
  readCategoryPage,
  readCorrelationPage,
  readMessage,
  readKeysPage,
  readPage,
  readPageAt,
  readRenderedPage,
  cutRenderedPage,
  readSkippedBetween,
  readWatchedAtOrBelow,
  readCommittedHead,
  type ReadFilter,
} from '../sql/index.js';
import { execute, type SqlQuery } from '@ordinal/pg';
import {
  ArchivedSegments,
  GUARDED_ATTEMPTS,
  indexArchived,
} from '../archive/archived-segments.service.js';
import { archivedSource, hotSource, isArchivedRange, readFrom } from '../archive/read-source.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';
import { watermarkStatus, type WatermarkStatus } from '../watermark/watermark-status.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import {
  RenderedMessage,
  toStoredMessage,
  type MessageRow,
  type RenderedRow,
} from '../row-mapper.js';
import { unqualified } from '../tenant.js';
import { MAX_POSITION, toPosition } from '@ordinal/pg';
import { DatabaseUnavailableError } from '@ordinal/pg';
import { isConnectionError, isQueryTimeout, driverError } from '@ordinal/pg';
import { TenantSessions } from './tenant-sessions.js';

/**
 * One read of the log after a position: the rows, the position the read covers, and (in
 * concurrent mode) the watched positions it passed without a row. A reader moves its
 * position to `to`, never further: what it did not read it has not passed.
 */
export interface CoveredRead {
  messages: StoredMessage[];
  /** Every matching message in (after, to] is in `messages`. */
  to: number;
  /** Positions in (after, to] the watermark passed without a row, still watched (abandoned, or released exactly within `lateWatchMs`), with no row in `messages`: watch them for late arrivals. */
  skipped: number[];
  /** An id above every transaction running when `skipped` was read (RUNNING_XID_BOUND): every one with an id that could still fill them is below it. */
  xmax: string;
  /** With `skipped`: when the first of them was recorded, before any claim of an arrival there (a reader's `arrivedSince` is never later). */
  since?: Date;
}

/** A row of a keyed read's first step (`readKeysPage`). */
interface KeysRow {
  index: string | number;
  message_type: string;
  user_id: string | null;
  stream_id: string | null;
  tenant: string | null;
}

/** Reads the log by position. Every read stops at the safe head (committed, gap-free). */
@Injectable()
export class LogReader {
  private readonly concurrent: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly archived: ArchivedSegments,
    private readonly tenants: TenantSessions,
  ) {
    this.concurrent = options.ordering === 'concurrent';
  }

  /** The low watermark's figures (moving it first, as any reader would): mode, safe head, the held hole. */
  async watermarkStatus(): Promise<WatermarkStatus> {
    return watermarkStatus(await this.safeHead(), this.watermark, this.options);
  }

  /**
   * The highest committed index, whatever is below it: in concurrent mode it is above the
   * safe head while a hole is held (for monitoring; readers never read past the safe head).
   */
  async committedHead(): Promise<number> {
    return this.guard(async () => {
      const [row] = await execute<{ head: string }>(this.dataSource.manager, readCommittedHead());
      return toPosition(row.head);
    });
  }

  /**
   * The highest index a reader may see: the committed head in gapless mode, the low
   * watermark in concurrent mode (nothing can appear below it any more).
   */
  async safeHead(): Promise<number> {
    return this.guard(() => this.watermark.safeHead());
  }

  /**
   * Whether a row may still commit late at or below `index` (concurrent mode: a position the
   * watermark passed without a row is watched for one, ORDINAL_LATE_WATCH_MS). Always false
   * in gapless mode, where nothing is ever passed.
   */
  async lateRowPossibleAtOrBelow(index: number): Promise<boolean> {
    if (!this.concurrent) return false;
    return this.guard(async () => {
      const [row] = await execute<{ watched: boolean }>(
        this.dataSource.manager,
        readWatchedAtOrBelow(index),
      );
      return row.watched;
    });
  }

  /** Up to `limit` messages from `fromIndex` (inclusive) up to `toIndex` and the safe head. */
  async page(
    fromIndex: number,
    limit: number,
    filter: ReadFilter = {},
    toIndex = Number.MAX_SAFE_INTEGER,
  ): Promise<StoredMessage[]> {
    return this.guard(async () => {
      // In gapless mode every visible row is below the head; in concurrent mode clamp to the watermark.
      if (this.concurrent) toIndex = Math.min(toIndex, await this.watermark.safeHead());
      const messages: StoredMessage[] = [];
      for (let from = fromIndex; messages.length < limit && from <= toIndex;) {
        const left = limit - messages.length;
        const read = await this.overTiers<MessageRow>(
          from,
          toIndex,
          filter,
          left,
          Infinity,
          (f, t) => readPage(f, t, left, filter),
        );
        messages.push(...read.rows.map(toStoredMessage));
        from = read.to + 1;
      }
      return messages;
    });
  }

  /**
   * Up to `limit` messages after `after`, up to `upTo`, which must not exceed a safe head read
   * before (so every row at or below it is visible): the one read every feed, the router and
   * subscriptions use, so none of them can claim positions it did not read. `rendered`: the
   * messages are RenderedMessage, their API JSON written by PostgreSQL (an SSE stream's read:
   * no body is parsed or serialised in Node), at most about `maxBytes` of JSON (a page that
   * stops there covers only up to its last row).
   */
  async readUpTo(
    after: number,
    limit: number,
    filter: ReadFilter,
    upTo: number,
    rendered = false,
    maxBytes = Number.MAX_SAFE_INTEGER,
  ): Promise<CoveredRead> {
    if (upTo <= after) return { messages: [], to: after, skipped: [], xmax: '0' };
    return this.guard(async () => {
      let full = false;
      let messages: StoredMessage[];
      // Archived ranges are read a chunk at a time: the read then covers up to the chunk's end.
      let reach: number;
      if (rendered) {
        const read = await this.overTiers<RenderedRow>(
          after + 1,
          upTo,
          filter,
          limit,
          maxBytes,
          (f, t) => readRenderedPage(f, t, limit, filter, maxBytes),
        );
        const page = cutRenderedPage(read.rows, maxBytes);
        full = page.cut;
        reach = read.to;
        messages = page.rows.map((row) => new RenderedMessage(row));
      } else {
        const read = await this.overTiers<MessageRow>(
          after + 1,
          upTo,
          filter,
          limit,
          Infinity,
          (f, t) => readPage(f, t, limit, filter),
        );
        reach = read.to;
        messages = read.rows.map(toStoredMessage);
      }
      full ||= messages.length === limit;
      const to = full ? messages[messages.length - 1].id : reach;
      return this.covered(after, to, messages, messages);
    });
  }

  /**
   * `readUpTo` for a reader that wants only some of the rows by their keys (the partitions of a
   * projection that one process runs): it reads the keys of up to `scan` rows first
   * (MessageKeys: no body, no metadata, nothing mapped), then maps only the rows `keep` wants,
   * at most `limit` of them. The read covers what it scanned: up to the `limit`-th kept row, or
   * the last scanned row when it scanned `scan`, else `upTo` (or the end of an archived chunk).
   * `full`: it stopped at `limit` or `scan`, so more may follow at once.
   */
  async readKeyedUpTo(
    after: number,
    limit: number,
    filter: ReadFilter,
    upTo: number,
    keep: (keys: MessageKeys) => boolean,
    scan: number,
  ): Promise<CoveredRead & { full: boolean }> {
    if (upTo <= after) return { messages: [], to: after, skipped: [], xmax: '0', full: false };
    return this.guard(async () => {
      const read = await this.overTiers<KeysRow>(after + 1, upTo, filter, scan, Infinity, (f, t) =>
        readKeysPage(f, t, scan, filter),
      );
      const scanned: MessageKeys[] = [];
      const kept: number[] = [];
      for (const row of read.rows) {
        const keys: MessageKeys = {
          id: toPosition(row.index),
          messageType: row.message_type,
          userId: row.user_id,
          streamId: unqualified(row.tenant, row.stream_id),
          tenant: row.tenant,
        };
        scanned.push(keys);
        if (keep(keys)) kept.push(keys.id);
        if (kept.length === limit) break;
      }
      const full = kept.length === limit || read.rows.length === scan;
      let to = kept.length === limit ? kept[limit - 1] : full ? scanned.at(-1)!.id : read.to;
      const messages: StoredMessage[] = [];
      // The kept rows, from the tier (or tiers: archived a chunk at a time) that holds them now.
      for (let from = after + 1; kept.length > 0 && from <= to;) {
        const rows = await this.overTiers<MessageRow>(
          from,
          to,
          filter,
          Infinity,
          Infinity,
          (f, t) => readPageAt(f, t, kept),
        );
        messages.push(...rows.rows.map(toStoredMessage));
        from = rows.to + 1;
      }
      // A kept row that did not come back (never so far: rows stay, in one tier or the other)
      // is not passed: the read covers only up to it, and the next one reads it again.
      const missing = kept.findIndex((id, i) => messages[i]?.id !== id);
      if (missing >= 0) {
        to = kept[missing] - 1;
        messages.splice(missing);
      }
      const covered = await this.covered(after, to, messages, scanned);
      return { ...covered, full: full && missing < 0 };
    });
  }

  /**
   * The covered read of `messages` over `(after, to]`: in concurrent mode with the watched
   * positions there that no row of `rows` (every row the read saw) holds.
   */
  private async covered(
    after: number,
    to: number,
    messages: StoredMessage[],
    rows: { id: number }[],
  ): Promise<CoveredRead> {
    if (!this.concurrent || to <= after) return { messages, to, skipped: [], xmax: '0' };
    const passed = await execute<{ position: string; xmax: string; recorded_at: Date }>(
      this.dataSource.manager,
      readSkippedBetween(after, to),
    );
    if (passed.length === 0) return { messages, to, skipped: [], xmax: '0' };
    const seen = new Set(rows.map((m) => m.id));
    const unseen = passed.filter((r) => !seen.has(toPosition(r.position)));
    const skipped = unseen.map((r) => toPosition(r.position));
    if (skipped.length === 0) return { messages, to, skipped, xmax: passed[0].xmax };
    // When the first of them was recorded: no claim of an arrival at one is stamped before it.
    let since = unseen[0].recorded_at;
    for (const r of unseen) if (r.recorded_at < since) since = r.recorded_at;
    return { messages, to, skipped, xmax: passed[0].xmax, since };
  }

  /**
   * Up to `limit` messages of one stream category from `fromIndex` (inclusive). Skips the
   * watermark in every mode: one category's positions commit in order. A tenant's category is
   * its stored name (`<tenant>/<category>`); with `tenant`, the read also runs under that
   * tenant's row-level security (docs/tenants.md).
   */
  async pageCategory(
    category: string,
    fromIndex: number,
    limit: number,
    tenant?: string,
  ): Promise<StoredMessage[]> {
    return this.guard(async () => {
      const messages: StoredMessage[] = [];
      for (let from = fromIndex; messages.length < limit && from <= MAX_POSITION;) {
        const left = limit - messages.length;
        const read = await this.overTiers<MessageRow>(
          from,
          MAX_POSITION,
          tenant === undefined ? {} : { tenant },
          Infinity,
          Infinity,
          (f, t) => readCategoryPage(category, f, left, t),
        );
        messages.push(...read.rows.map(toStoredMessage));
        from = read.to + 1;
      }
      return messages;
    });
  }

  /**
   * Up to `limit` messages of one correlation after `after`, up to `upTo` (a safe head read
   * before), in index order. `to` is where the next page starts after.
   */
  async readCorrelation(
    correlationId: string,
    after: number,
    limit: number,
    filter: ReadFilter,
    upTo: number,
  ): Promise<{ messages: StoredMessage[]; to: number }> {
    if (upTo <= after) return { messages: [], to: after };
    return this.guard(async () => {
      const read = await this.overTiers<MessageRow>(
        after + 1,
        upTo,
        filter,
        Infinity,
        Infinity,
        (f, t) => readCorrelationPage(correlationId, f, t, limit, filter),
      );
      const messages = read.rows.map(toStoredMessage);
      return { messages, to: messages.length === limit ? messages[limit - 1].id : read.to };
    });
  }

  /** One message, or null when no message has that index. */
  async get(index: number): Promise<StoredMessage | null> {
    return this.guard(async () => {
      const read = await this.overTiers<MessageRow>(index, index, {}, 1, Infinity, () =>
        readMessage(index),
      );
      return read.rows.length > 0 ? toStoredMessage(read.rows[0]) : null;
    });
  }

  /**
   * The first stretch of `[from, to]` in one tier, read by `build(from, to)`: the hot table
   * (guarded: if a segment there was archived since this process looked, the list is read
   * again and the read redone), or one archived chunk, whose rows from `from` (at most
   * `maxRows` of them and about `maxChars` of text) stand in for the table. `to` is where the
   * stretch ends: every row of `[from, to]` the query matches is in `rows`.
   */
  private async overTiers<R>(
    from: number,
    to: number,
    filter: ReadFilter,
    maxRows: number,
    maxChars: number,
    build: (from: number, to: number) => SqlQuery,
  ): Promise<{ rows: R[]; to: number }> {
    for (let attempt = 1; ; attempt++) {
      const stretch = await this.archived.stretch(from, to);
      try {
        if (stretch.tier === 'hot') {
          const query = readFrom(build(from, stretch.to), hotSource(from, stretch.to));
          return { rows: await this.tenants.read<R>(filter.tenant, query), to: stretch.to };
        }
        const { segment } = stretch;
        if (filter.tiers === 'hot') throw indexArchived(from, segment);
        const chunk = await this.archived.rows(segment, stretch.chunk);
        const picked: string[] = [];
        let reach = stretch.to;
        let chars = 0;
        for (let i = lowerBound(chunk.indices, from); i < chunk.indices.length; i++) {
          if (chunk.indices[i] > stretch.to) break;
          if (picked.length >= maxRows || (picked.length > 0 && chars >= maxChars)) {
            reach = chunk.indices[i] - 1;
            break;
          }
          picked.push(chunk.elements[i]);
          chars += chunk.elements[i].length;
        }
        if (picked.length === 0) return { rows: [], to: reach };
        const query = readFrom(
          build(from, reach),
          archivedSource(segment.first, segment.manifest.sha256, picked),
        );
        return { rows: await this.tenants.read<R>(filter.tenant, query), to: reach };
      } catch (error) {
        if (!isArchivedRange(error) || attempt === GUARDED_ATTEMPTS) throw error;
        this.archived.invalidate();
      }
    }
  }

  private async guard<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (isConnectionError(error) || isQueryTimeout(error)) {
        throw new DatabaseUnavailableError(
          `The database is unavailable (${driverError(error).message}); retry later`,
          false,
          { cause: error },
        );
      }
      throw error;
    }
  }
}

/** The first position in `sorted` holding a value >= `value`. */
function lowerBound(sorted: number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
