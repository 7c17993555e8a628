import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { StoredMessage } from '../message.js';
import { execute, readHead, readMessage, readPage, type ReadFilter } from '../sql/index.js';
import { toPosition, toStoredMessage, type MessageRow } from '../row-mapper.js';
import { DatabaseUnavailableError } from '../errors/index.js';
import { isConnectionError, driverError } from '../writer/pg-errors.js';

/** Reads the log by position. Every read stops at the safe head (committed, gap-free). */
@Injectable()
export class LogReader {
  constructor(private readonly dataSource: DataSource) {}

  /** The highest index a reader may see. In gapless mode: the committed head. */
  async safeHead(): Promise<number> {
    return this.guard(async () => {
      const [row] = await execute<{ head: string }>(this.dataSource.manager, readHead());
      return toPosition(row.head);
    });
  }

  /** Up to `limit` messages from `fromIndex` (inclusive) up to `toIndex` and the safe head. */
  async page(fromIndex: number, limit: number, filter: ReadFilter = {}, toIndex = Number.MAX_SAFE_INTEGER): Promise<StoredMessage[]> {
    return this.guard(async () => {
      const rows = await execute<MessageRow>(this.dataSource.manager, readPage(fromIndex, toIndex, limit, filter));
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
