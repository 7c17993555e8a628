import type { Logger } from '@nestjs/common';
import type { LogReader, StoredMessage } from '@ordinal/log';
import type { Lease } from '@ordinal/ownership';
import type { DataSource, EntityManager } from 'typeorm';
import { HandlerFailedError } from '../errors/index.js';
import type { ParkedStore } from './parked-store.js';

/** What a replay of parked messages did. */
export interface ParkedReplay {
  replayed: number;
  remaining: number;
  error: string | null;
}

/** What a replay runs on (the subscription's own parts). */
export interface ParkedReplayDeps {
  name: string;
  parked: ParkedStore;
  reader: LogReader;
  dataSource: DataSource;
  lease: Lease | null;
  apply: (message: StoredMessage, manager: EntityManager) => Promise<void>;
  logger: Logger;
}

/**
 * Applies a subscription's parked messages again, oldest first, each in its own transaction
 * that also deletes its parked row (fenced like a batch); stops at the first that fails again
 * (its row keeps the new error).
 */
export async function replayParkedMessages(deps: ParkedReplayDeps): Promise<ParkedReplay> {
  deps.lease?.ensureHeld();
  const list = await deps.parked.list(deps.name);
  let replayed = 0;
  for (const entry of list) {
    const message = await deps.reader.get(entry.position);
    try {
      await deps.dataSource.transaction(async (manager) => {
        if (message) await deps.apply(message, manager);
        await deps.parked.unpark(manager, deps.name, entry.position);
        await deps.lease?.fence(manager);
      });
    } catch (error) {
      const cause =
        error instanceof HandlerFailedError && error.cause instanceof Error
          ? error.cause.message
          : (error as Error).message;
      await deps.parked.failedAgain(deps.name, entry.position, cause).catch(() => undefined);
      deps.logger.error(`'${deps.name}': parked index ${entry.position} failed again: ${cause}`);
      return { replayed, remaining: list.length - replayed, error: cause };
    }
    replayed += 1;
    deps.logger.log(`'${deps.name}': parked index ${entry.position} replayed`);
  }
  return { replayed, remaining: 0, error: null };
}
