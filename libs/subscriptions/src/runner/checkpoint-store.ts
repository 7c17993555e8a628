import { readOpenSkipped } from '@ordinal/log/internal';
import { execute, toPosition, type SqlRunner } from '@ordinal/pg';
import type { DataSource } from 'typeorm';
import { CheckpointMovedError } from '../errors/index.js';
import {
  advanceCheckpoint,
  describeCheckpoint,
  ensureCheckpoint,
  markFailed,
  resetCheckpoint,
  touchCheckpoint,
  type CheckpointRow,
} from '../sql/index.js';

/** A checkpoint as the runner holds it. */
export interface Checkpoint {
  position: number;
  liveFrom: number;
  state: string;
  lastError: string | null;
  /** When the row was last written (the position, a late delivery, a failure). */
  updatedAt: Date;
  /**
   * What its restart watches late arrivals from (`watchAbandonedBelow.arrivedSince` of a
   * feed): the earliest time it still owed one when it last wrote its position; null: none.
   */
  arrivedSince: Date | null;
}

function toCheckpoint(row: CheckpointRow): Checkpoint {
  return {
    position: toPosition(row.position),
    liveFrom: toPosition(row.live_from),
    state: row.state,
    lastError: row.last_error,
    updatedAt: row.updated_at,
    arrivedSince: row.arrived_since,
  };
}

/** The checkpoint operations of one subscription (SQL in sql/checkpoint.sql.ts). */
export class CheckpointStore {
  constructor(
    private readonly dataSource: DataSource,
    readonly name: string,
    private readonly kind: string,
  ) {}

  /** Loads the checkpoint, creating it at `position` with boundary `liveFrom` when new. */
  async ensure(position: number, liveFrom: number): Promise<Checkpoint> {
    const [row] = await execute<CheckpointRow>(
      this.dataSource.manager,
      ensureCheckpoint(this.name, this.kind, position, liveFrom),
    );
    return toCheckpoint(row);
  }

  /**
   * Moves it from `expected` to `position` on `runner` (the batch's transaction), with the
   * earliest time it still owes a late arrival at or below `position` from (null: none).
   */
  async advance(
    runner: SqlRunner,
    expected: number,
    position: number,
    owedSince: Date | null,
  ): Promise<void> {
    const rows = await execute(runner, advanceCheckpoint(this.name, expected, position, owedSince));
    if (rows.length === 0) throw new CheckpointMovedError(this.name);
  }

  /**
   * Marks a late arrival's transaction as this subscription's (fails if it was reset below),
   * with what it owes once that arrival is delivered.
   */
  async touch(runner: SqlRunner, atLeast: number, owedSince: Date | null): Promise<void> {
    const rows = await execute(runner, touchCheckpoint(this.name, atLeast, owedSince));
    if (rows.length === 0) throw new CheckpointMovedError(this.name);
  }

  async fail(error: string, state: 'failed' | 'stopped' = 'failed'): Promise<void> {
    await execute(this.dataSource.manager, markFailed(this.name, error.slice(0, 4000), state));
  }

  /** Records what it reads, for processes that do not run it. */
  async describe(stream: string): Promise<void> {
    await execute(this.dataSource.manager, describeCheckpoint(this.name, stream));
  }

  async reset(runner: SqlRunner, position: number, liveFrom: number): Promise<void> {
    await execute(runner, resetCheckpoint(this.name, position, liveFrom));
  }

  /**
   * Watched positions at or below `position` not arrived yet, or arrived since `arrivedSince`
   * (restored after a restart), with when the first was recorded (before any claim there).
   */
  async openSkipped(
    position: number,
    arrivedSince: Date | null,
  ): Promise<{ positions: number[]; xmax: string; since?: Date }> {
    const rows = await execute<{ position: string; xmax: string; recorded_at: Date }>(
      this.dataSource.manager,
      readOpenSkipped(position, arrivedSince),
    );
    let since: Date | undefined;
    for (const r of rows) if (since === undefined || r.recorded_at < since) since = r.recorded_at;
    return {
      positions: rows.map((r) => toPosition(r.position)),
      xmax: rows[0]?.xmax ?? '0',
      since,
    };
  }
}
