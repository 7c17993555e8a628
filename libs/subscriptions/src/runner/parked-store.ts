import { execute, toPosition, type SqlRunner } from '@ordinal/pg';
import type { DataSource } from 'typeorm';
import {
  countParked,
  listParked,
  parkMessage,
  replayFailed,
  unparkMessage,
  type ParkedRow,
} from '../sql/index.js';

/** A parked message as code and the status API see it. */
export interface ParkedMessage {
  consumer: string;
  position: number;
  messageType: string;
  error: string;
  attempts: number;
  parkedAt: string;
}

function toParked(row: ParkedRow): ParkedMessage {
  return {
    consumer: row.consumer,
    position: toPosition(row.position),
    messageType: row.message_type,
    error: row.error,
    attempts: row.attempts,
    parkedAt: new Date(row.parked_at).toISOString(),
  };
}

/** The parked messages of subscriptions (SQL in sql/parked.sql.ts). */
export class ParkedStore {
  constructor(private readonly dataSource: DataSource) {}

  park(
    runner: SqlRunner,
    consumer: string,
    position: number,
    messageType: string,
    error: string,
    attempts: number,
  ): Promise<unknown> {
    return execute(runner, parkMessage(consumer, position, messageType, error, attempts));
  }

  async list(consumer: string): Promise<ParkedMessage[]> {
    return (await execute<ParkedRow>(this.dataSource.manager, listParked(consumer))).map(toParked);
  }

  async counts(consumers: string[]): Promise<Map<string, number>> {
    const rows = await execute<{ consumer: string; parked: number }>(
      this.dataSource.manager,
      countParked(consumers),
    );
    return new Map(rows.map((r) => [r.consumer, r.parked]));
  }

  unpark(runner: SqlRunner, consumer: string, position: number): Promise<unknown> {
    return execute(runner, unparkMessage(consumer, position));
  }

  failedAgain(consumer: string, position: number, error: string): Promise<unknown> {
    return execute(this.dataSource.manager, replayFailed(consumer, position, error));
  }
}
