import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DatabaseUnavailableError } from '@ordinal/pg';
import { execute, isConnectionError, toPosition } from '@ordinal/pg';
import { readBookmark, saveBookmark, setBookmark } from '../sql/index.js';

/** Reads and moves replayable interfaces' bookmarks in `interface_bookmarks`. */
@Injectable()
export class BookmarkStore {
  constructor(private readonly dataSource: DataSource) {}

  /** The saved bookmark of `name` (0 for a new interface, whose row is created now). */
  async read(name: string): Promise<number> {
    return (await this.readSaved(name)).position;
  }

  /**
   * The saved bookmark of `name` and what the next run's late watch takes as `arrivedSince`:
   * the earliest time the feed still owed a late arrival from when it was saved (null: none).
   */
  async readSaved(name: string): Promise<{ position: number; arrivedSince: Date | null }> {
    return this.guard(async () => {
      const [row] = await execute<{ position: string; arrived_since: Date | null }>(
        this.dataSource.manager,
        readBookmark(name),
      );
      return { position: toPosition(row.position), arrivedSince: row.arrived_since };
    });
  }

  /**
   * Moves the bookmark of `name` forward to `position`, with the earliest time the feed still
   * owes a late arrival at or below it from (null: none).
   */
  async save(name: string, position: number, owedSince: Date | null): Promise<void> {
    await this.guard(() =>
      execute(this.dataSource.manager, saveBookmark(name, position, owedSince)),
    );
  }

  /** Sets the bookmark of `name` to `position`, backwards too (a rewind). */
  async set(name: string, position: number): Promise<void> {
    await this.guard(() => execute(this.dataSource.manager, setBookmark(name, position)));
  }

  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isConnectionError(error))
        throw new DatabaseUnavailableError(
          `The database is unavailable (${(error as Error).message}); retry later`,
          false,
          { cause: error },
        );
      throw error;
    }
  }
}
