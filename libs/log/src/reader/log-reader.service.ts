import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { StoredMessage } from '../message.js';
import { execute, readCategoryPage, readMessage, readPage, type ReadFilter } from '../sql/index.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import { toPosition, toStoredMessage, type MessageRow } from '../row-mapper.js';
import { DatabaseUnavailableError } from '../errors/index.js';
import { isConnectionError, driverError } from '../writer/pg-errors.js';

/** Reads the log by position. Every read stops at the safe head (committed, gap-free). */
@Injectable()
export class LogReader {
  private readonly concurrent: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) options: ResolvedLogOptions,
  ) {
    this.concurrent = options.ordering === 'concurrent';
  }

  /**
   * The highest index a reader may see: the committed head in gapless mode, the low
   * watermark in concurrent mode (nothing can appear below it any more).
   */
  async safeHead(): Promise<number> {
    return this.guard(() => this.watermark.safeHead());
  }

  /** Up to `limit` messages from `fromIndex` (inclusive) up to `toIndex` and the safe head. */
  async page(fromIndex: number, limit: number, filter: ReadFilter = {}, toIndex = Number.MAX_SAFE_INTEGER): Promise<StoredMessage[]> {
    return this.guard(async () => {
      // In gapless mode every visible row is below the head; in concurrent mode clamp to the watermark.
      if (this.concurrent) toIndex = Math.min(toIndex, await this.watermark.safeHead());
      const rows = await execute<MessageRow>(this.dataSource.manager, readPage(fromIndex, toIndex, limit, filter));
      return rows.map(toStoredMessage);
    });
  }

  /**
   * Up to `limit` messages of one stream category from `fromIndex` (inclusive). Skips the
   * watermark in every mode: one category's positions commit in order.
   */
  async pageCategory(category: string, fromIndex: number, limit: number): Promise<StoredMessage[]> {
    return this.guard(async () => {
      const rows = await execute<MessageRow>(this.dataSource.manager, readCategoryPage(category, fromIndex, limit));
      return rows.map(toStoredMessage);
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
      if (isConnectionError(error)) {
        throw new DatabaseUnavailableError(`The database is unavailable (${driverError(error).message}); retry later`, false, { cause: error });
      }
      throw error;
    }
  }
}
