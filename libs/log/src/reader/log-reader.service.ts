import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { StoredMessage } from '../message.js';
import {
  readCategoryPage,
  readCorrelationPage,
  readMessage,
  readPage,
  readRenderedPage,
  cutRenderedPage,
  readSkippedBetween,
  readWatchedAtOrBelow,
  readCommittedHead,
  type ReadFilter,
} from '../sql/index.js';
import { execute } from '@ordinal/pg';
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
import { toPosition } from '@ordinal/pg';
import { DatabaseUnavailableError } from '@ordinal/pg';
import { isConnectionError, isQueryTimeout, driverError } from '@ordinal/pg';

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
}

/** Reads the log by position. Every read stops at the safe head (committed, gap-free). */
@Injectable()
export class LogReader {
  private readonly concurrent: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
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
      const rows = await execute<MessageRow>(
        this.dataSource.manager,
        readPage(fromIndex, toIndex, limit, filter),
      );
      return rows.map(toStoredMessage);
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
      if (rendered) {
        const page = cutRenderedPage(
          await execute<RenderedRow>(
            this.dataSource.manager,
            readRenderedPage(after + 1, upTo, limit, filter, maxBytes),
          ),
          maxBytes,
        );
        full = page.cut;
        messages = page.rows.map((row) => new RenderedMessage(row));
      } else {
        messages = (
          await execute<MessageRow>(
            this.dataSource.manager,
            readPage(after + 1, upTo, limit, filter),
          )
        ).map(toStoredMessage);
      }
      full ||= messages.length === limit;
      const to = full ? messages[messages.length - 1].id : upTo;
      if (!this.concurrent) return { messages, to, skipped: [], xmax: '0' };
      const passed = await execute<{ position: string; xmax: string }>(
        this.dataSource.manager,
        readSkippedBetween(after, to),
      );
      if (passed.length === 0) return { messages, to, skipped: [], xmax: '0' };
      const seen = new Set(messages.map((m) => m.id));
      const skipped = passed.map((r) => toPosition(r.position)).filter((p) => !seen.has(p));
      return { messages, to, skipped, xmax: passed[0].xmax };
    });
  }

  /**
   * Up to `limit` messages of one stream category from `fromIndex` (inclusive). Skips the
   * watermark in every mode: one category's positions commit in order.
   */
  async pageCategory(category: string, fromIndex: number, limit: number): Promise<StoredMessage[]> {
    return this.guard(async () => {
      const rows = await execute<MessageRow>(
        this.dataSource.manager,
        readCategoryPage(category, fromIndex, limit),
      );
      return rows.map(toStoredMessage);
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
      const rows = await execute<MessageRow>(
        this.dataSource.manager,
        readCorrelationPage(correlationId, after + 1, upTo, limit, filter),
      );
      const messages = rows.map(toStoredMessage);
      return { messages, to: messages.length === limit ? messages[limit - 1].id : upTo };
    });
  }

  /** One message, or null when no message has that index. */
  async get(index: number): Promise<StoredMessage | null> {
    return this.guard(async () => {
      const [row] = await execute<MessageRow>(this.dataSource.manager, readMessage(index));
      return row ? toStoredMessage(row) : null;
    });
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
