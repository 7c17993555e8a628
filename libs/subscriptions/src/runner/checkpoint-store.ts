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
}

function toCheckpoint(row: CheckpointRow): Checkpoint {
  return {
    position: toPosition(row.position),
    liveFrom: toPosition(row.live_from),
    state: row.state,
    lastError: row.last_error,
    updatedAt: row.updated_at,
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

  /** Moves it from `expected` to `position` on `runner` (the batch's transaction). */
  async advance(runner: SqlRunner, expected: number, position: number): Promise<void> {
    const rows = await execute(runner, advanceCheckpoint(this.name, expected, position));
    if (rows.length === 0) throw new CheckpointMovedError(this.name);
  }

  /** Marks a late arrival's transaction as this subscription's (fails if it was reset below). */
  async touch(runner: SqlRunner, atLeast: number): Promise<void> {
    const rows = await execute(runner, touchCheckpoint(this.name, atLeast));
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

  /** Abandoned positions at or below `position` not arrived yet (restored after a restart). */
  async openSkipped(
    position: number,
    arrivedSince: Date,
  ): Promise<{ positions: number[]; xmax: string }> {
    const rows = await execute<{ position: string; xmax: string }>(
      this.dataSource.manager,
      readOpenSkipped(position, arrivedSince),
    );
    return { positions: rows.map((r) => toPosition(r.position)), xmax: rows[0]?.xmax ?? '0' };
  }
}
