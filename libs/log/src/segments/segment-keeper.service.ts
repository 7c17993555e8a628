import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execute, MAX_POSITION, OrdinalError, type SqlQuery } from '@ordinal/pg';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import { segmentTable } from './segment-range.js';
import {
  addSegment,
  dropSegment,
  listSegments,
  lockSegments,
  readSegmentPlan,
  setSegmentSize,
  type SegmentRow,
} from './segments.sql.js';

/** A segment as `GET /api/admin/segments` and `ordinal segments list` show it. */
export interface SegmentInfo {
  /** Its first index. */
  firstIndex: number;
  /** Its last index (`firstIndex + size - 1`). */
  lastIndex: number;
  /** Its partition of the messages table. */
  table: string;
  /** `hot`: in PostgreSQL. */
  tier: string;
  /** Its partition's size on disk, indexes included (bytes). */
  bytes: number;
  /** PostgreSQL's estimate of its rows (null before it was first analysed). */
  estimatedRows: number | null;
  createdAt: string;
}

/** Runs one statement in some transaction and returns its rows. */
export type SqlRun = (query: SqlQuery) => Promise<unknown[]>;

/** The SQLSTATE and message start of an insert at a position no segment covers. */
const isMissingSegment = (error: unknown): boolean => {
  const e =
    (error as { driverError?: { code?: string; message?: string } })?.driverError ??
    (error as { code?: string; message?: string });
  return e?.code === '23514' && /^no partition of relation/.test(e?.message ?? '');
};

/**
 * Keeps segments ahead of the head (docs/storage.md): the log's messages table is partitioned
 * by index range, without a default partition, so a position no segment covers cannot be
 * written. At start it checks the configured segment size against the log's (and lays an
 * empty log out again at the configured size); after each flush the writer tells it the new
 * head, and when fewer than `ahead` positions are left above it, it adds segments in the
 * background, one transaction under an advisory lock, whichever process gets there first.
 */
@Injectable()
export class SegmentKeeper {
  private readonly logger = new Logger(SegmentKeeper.name);
  /** One past the last index the segments cover, as last read or made (0: not read yet). */
  private covered = 0;
  private running: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
  ) {}

  /** Indices per segment (checked against the log's at start). */
  get segmentSize(): number {
    return this.options.segmentSize;
  }

  /** Positions kept covered above the head: a segment, and at least two full flushes. */
  private get ahead(): number {
    return Math.max(this.options.segmentSize, 2 * this.options.maxBatchMessages);
  }

  /**
   * At start, after the migrations: the configured size must be the log's (an empty log is
   * laid out again at it), and segments must cover the head and `ahead` beyond.
   */
  async start(): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await execute(manager, lockSegments());
      const [plan] = await execute<{
        size: string;
        used: string;
        holds_messages: boolean;
      }>(manager, readSegmentPlan());
      const stored = Number(plan.size);
      const wanted = this.options.segmentSize;
      if (stored === wanted) return;
      if (plan.holds_messages || Number(plan.used) > 0)
        throw new OrdinalError(
          'invalid_configuration',
          `The log's segments are ${stored} indices each and the configuration asks for ${wanted} (log.segmentSize, the server's ORDINAL_SEGMENT_SIZE): the size is fixed once the log holds a message; set it back to ${stored}`,
        );
      for (const segment of await execute<SegmentRow>(manager, listSegments()))
        for (const statement of dropSegment(segment.table_name)) await execute(manager, statement);
      await execute(manager, setSegmentSize(wanted));
      this.logger.log(`Segments laid out at ${wanted} indices each (the log is empty)`);
    });
    this.covered = 0;
    await this.ensure();
  }

  /** After a flush: the head it reached. Adds segments in the background when it comes near the end. */
  noteHead(head: number): void {
    if (this.covered === 0 || head + this.ahead < this.covered || this.running) return;
    this.running = this.ensure()
      .catch((error: unknown) =>
        this.logger.warn(
          `Could not add segments ahead of index ${head} (retried after the next flush): ${String(error)}`,
        ),
      )
      .finally(() => (this.running = null));
  }

  /**
   * Whether `error` is an insert at a position no segment covers; if so, segments are added
   * (the caller then retries once).
   */
  async repairs(error: unknown): Promise<boolean> {
    if (!isMissingSegment(error)) return false;
    this.logger.warn('A flush reached a position no segment covered; adding segments');
    // One in the background may have read the head before it moved: then a fresh one.
    await this.running;
    await this.ensure();
    return true;
  }

  /**
   * Adds segments until they cover `ahead` positions past the highest used one (or `through`,
   * if higher): one transaction, under the segments' advisory lock.
   */
  async ensure(through = 0): Promise<void> {
    this.covered = await this.dataSource.transaction((manager) =>
      this.coverWithin((query) => execute(manager, query), through),
    );
  }

  /**
   * In the caller's transaction (an import's, which holds the log's lock): takes the segments'
   * lock, adds segments through `through` and `ahead` past the highest used position, and
   * returns one past the last index they cover.
   */
  async coverWithin(run: SqlRun, through: number): Promise<number> {
    await run(lockSegments());
    const [plan] = (await run(readSegmentPlan())) as {
      size: string;
      covered: string;
      used: string;
    }[];
    const size = Number(plan.size);
    const used = Math.max(Number(plan.used), through);
    let end = Number(plan.covered);
    // A head moved far past the segments (a log restored at a high position, an import
    // there): the unused ranges below its segment get none.
    if (used >= end) end += Math.floor((used - end) / size) * size;
    const target = Math.min(used + this.ahead, MAX_POSITION);
    while (end <= target) {
      const last = Math.min(end + size, MAX_POSITION + 1);
      const table = segmentTable(end);
      for (const statement of addSegment(table, end, last)) await run(statement);
      this.logger.log(`Segment ${table} added: indices ${end}..${last - 1}`);
      end = last;
    }
    return Math.max(end, Number(plan.covered));
  }

  /** Every segment, oldest first. */
  async list(): Promise<SegmentInfo[]> {
    const rows = await execute<SegmentRow>(this.dataSource.manager, listSegments());
    return rows.map((row) => ({
      firstIndex: Number(row.first_index),
      lastIndex: Number(row.end_index) - 1,
      table: row.table_name,
      tier: row.tier,
      bytes: Number(row.bytes),
      estimatedRows: Number(row.estimated_rows) < 0 ? null : Number(row.estimated_rows),
      createdAt: new Date(row.created_at).toISOString(),
    }));
  }
}
