import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { SegmentInfo } from '@ordinal/contract';
import {
  DatabaseUnavailableError,
  execute,
  MAX_POSITION,
  OrdinalError,
  type SqlQuery,
} from '@ordinal/pg';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import { TABLES } from '../log.constants.js';
import type { ResolvedLogOptions } from '../log-options.js';
import { segmentTable } from './segment-range.js';
import {
  addSegment,
  dropSegment,
  listSegments,
  boundLockWait,
  lockSegments,
  readSegmentPlan,
  tryLockSegments,
  setSegmentSize,
  type SegmentRow,
} from './segments.sql.js';

/** SQLSTATE of a lock wait past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Longest adding segments waits for a lock (ms). */
const ENSURE_LOCK_TIMEOUT_MS = 5000;

/** Runs one statement in some transaction and returns its rows. */
export type SqlRun = (query: SqlQuery) => Promise<unknown[]>;

/**
 * An insert at a position no segment covers: SQLSTATE 23514 (check_violation) on the messages
 * table with no constraint named (a CHECK constraint, `messages_index_passed` among them, names
 * one). Told by the fields, not the message, which the server's `lc_messages` may translate.
 */
const isMissingSegment = (error: unknown): boolean => {
  type Fields = { code?: string; constraint?: string; table?: string };
  const e = (error as { driverError?: Fields })?.driverError ?? (error as Fields);
  return e?.code === '23514' && !e.constraint && e.table === TABLES.messages;
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
export class SegmentKeeper implements OnApplicationShutdown {
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
   * laid out again at it), and segments must cover the head and `ahead` beyond. An import or
   * another server holding the segments' lock does not hold the start up: the check needs no
   * lock once the log holds a message, and segments are then added after the first flush.
   */
  async start(): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const [{ locked }] = await execute<{ locked: boolean }>(manager, tryLockSegments());
      const plan = async () =>
        (
          await execute<{ size: string; used: string; holds_messages: boolean }>(
            manager,
            readSegmentPlan(),
          )
        )[0];
      let current = await plan();
      const stored = Number(current.size);
      const wanted = this.options.segmentSize;
      if (stored === wanted) return;
      const refuse = () =>
        new OrdinalError(
          'invalid_configuration',
          `The log's segments are ${stored} indices each and the configuration asks for ${wanted} (log.segmentSize, the server's ORDINAL_SEGMENT_SIZE): the size is fixed once the log holds a message; set it back to ${stored}`,
        );
      if (current.holds_messages || Number(current.used) > 0) throw refuse();
      if (!locked) {
        await execute(manager, lockSegments());
        current = await plan();
        if (Number(current.size) === wanted) return;
        if (current.holds_messages || Number(current.used) > 0) throw refuse();
      }
      for (const segment of await execute<SegmentRow>(manager, listSegments()))
        for (const statement of dropSegment(segment.table_name)) await execute(manager, statement);
      await execute(manager, setSegmentSize(wanted));
      this.logger.log(`Segments laid out at ${wanted} indices each (the log is empty)`);
    });
    this.covered = 0;
    try {
      await this.ensure();
    } catch (error) {
      if ((error as { code?: string })?.code !== LOCK_NOT_AVAILABLE) throw error;
      this.logger.warn(
        `Segments not checked at start: their lock is held (an import?); they are added after the first flush`,
      );
      const [{ covered }] = await execute<{ covered: string }>(
        this.dataSource.manager,
        readSegmentPlan(),
      );
      this.covered = Number(covered);
    }
  }

  /** Lets segments being added in the background finish before the connections close. */
  async onApplicationShutdown(): Promise<void> {
    await this.running;
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
    await this.ensure().catch((cause: unknown) => {
      throw new DatabaseUnavailableError(
        `No segment of the log covers the next position, and adding one failed (${String(cause)}); nothing was stored, retry later`,
        false,
        { cause },
      );
    });
    return true;
  }

  /**
   * Adds segments until they cover `ahead` positions past the highest used one (or `through`,
   * if higher): one transaction, under the segments' advisory lock.
   */
  async ensure(through = 0): Promise<void> {
    this.covered = await this.dataSource.transaction(async (manager) => {
      // Neither the lock nor ATTACH waits for ever (behind an import, a manual ANALYZE): the
      // next flush tries again.
      await execute(manager, boundLockWait(ENSURE_LOCK_TIMEOUT_MS));
      return this.coverWithin((query) => execute(manager, query), through);
    });
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
      archivedAt: row.archived_at ? new Date(row.archived_at).toISOString() : null,
    }));
  }
}
