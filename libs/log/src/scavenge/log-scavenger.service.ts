import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execute, toPosition, ReadOnlyReplicaError } from '@ordinal/pg';
import { ScavengeRunningError } from '../errors/index.js';
import {
  finishScavengeRun,
  readScavengeRuns,
  scavengeBatch,
  startScavengeRun,
  type ScavengeRunRow,
} from '../sql/index.js';
import { LOCKS, TABLES } from '../log.constants.js';
import { SegmentArchiver } from '../archive/segment-archiver.service.js';
import { throttleRestMs } from './throttle.js';

export { throttleRestMs } from './throttle.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import { whileSessionLocked } from '../sql/session-lock.js';
import { LiveRouter } from '../router/live-router.service.js';
import { throttlePercent, type ResolvedLogOptions } from '../log-options.js';

/** One scavenge run as it stands (docs/lifecycle.md). */
export interface ScavengeRun {
  id: number;
  status: 'running' | 'finished' | 'failed';
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
  /** The run erases hidden rows up to this index (the head when it started). */
  through: number;
  /** Every index up to this one is done. */
  position: number;
  /** Rows erased in place (body and metadata). */
  rowsErased: number;
  /** Stored bytes of the erased bodies and metadata (`pg_column_size`). */
  bytesFreed: number;
  batches: number;
  /** `pg_total_relation_size` of the messages table when the run started and after it (and its VACUUM). */
  tableBytesBefore: number | null;
  tableBytesAfter: number | null;
  error: string | null;
}

/** Options of one run. */
export interface ScavengeOptions {
  /** Indices a batch covers (one short transaction each). @default 1000 */
  batchSize?: number;
  /** VACUUM the messages table after the run, so its free space is reusable. @default true */
  vacuum?: boolean;
  /**
   * The share of its time the run works (1-100, percent): after a batch that took t ms it
   * rests t × (100 − p) / p ms. @default the log's `scavengeThrottlePercent` (25)
   */
  throttlePercent?: number;
}

const DEFAULT_BATCH = 1000;

function toRun(row: ScavengeRunRow): ScavengeRun {
  const num = (v: string | null) => (v === null ? null : toPosition(v));
  return {
    id: toPosition(row.id),
    status: row.status,
    startedAt: new Date(row.started_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
    through: toPosition(row.through),
    position: toPosition(row.position),
    rowsErased: toPosition(row.rows_erased),
    bytesFreed: toPosition(row.bytes_freed),
    batches: toPosition(row.batches),
    tableBytesBefore: num(row.table_bytes_before),
    tableBytesAfter: num(row.table_bytes_after),
    error: row.error,
  };
}

/**
 * The scavenge: erases, in place, the body and metadata of every row a delete or a retention
 * rule hides, keeping the row and its index (docs/lifecycle.md). Resumable and idempotent: each
 * batch commits with the run's progress, a run left `running` by a dead process is resumed by
 * the next one, erased rows are never counted again. One run at a time across every process
 * (a session advisory lock held by a connection of its own).
 */
@Injectable()
export class LogScavenger {
  private readonly logger = new Logger(LogScavenger.name);
  private current: ScavengeRun | null = null;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly router: LiveRouter,
    private readonly archiver: SegmentArchiver,
  ) {}

  /** The run in progress in this process, or null. */
  get running(): ScavengeRun | null {
    return this.current;
  }

  /** The newest runs (any process), newest first. */
  async runs(limit = 10): Promise<ScavengeRun[]> {
    return (await execute<ScavengeRunRow>(this.dataSource.manager, readScavengeRuns(limit))).map(
      toRun,
    );
  }

  /**
   * Starts (or resumes) a run and resolves with it as soon as it has its record, the run going
   * on in the background (`running`, `runs()` follow it); `done` settles when it ends.
   */
  start(options: ScavengeOptions = {}): Promise<{ run: ScavengeRun; done: Promise<ScavengeRun> }> {
    return new Promise((resolve, reject) => {
      let started = false;
      const done = this.run(options, (run) => {
        if (started) return;
        started = true;
        resolve({ run, done });
      });
      done.catch((error: unknown) => {
        if (!started) reject(error);
        else this.logger.warn(`Scavenge failed: ${(error as Error).message}`);
      });
    });
  }

  /**
   * Runs (or resumes) a scavenge to the end and returns its record. `onBatch` is told when the
   * run has its record and after every batch. `ScavengeRunningError` when another run holds the lock.
   */
  async run(
    options: ScavengeOptions = {},
    onBatch?: (run: ScavengeRun) => void,
  ): Promise<ScavengeRun> {
    if (this.options.role === 'replica-reader') throw new ReadOnlyReplicaError();
    const size = options.batchSize ?? DEFAULT_BATCH;
    if (!Number.isSafeInteger(size) || size < 1)
      throw new RangeError(`batchSize must be a positive integer, got ${size}`);
    const throttle = throttlePercent(
      options.throttlePercent ?? this.options.scavengeThrottlePercent,
      {
        option: 'throttlePercent',
      },
    );
    return whileSessionLocked(
      this.dataSource,
      LOCKS.scavenge,
      () => new ScavengeRunningError(),
      async (session) => {
        try {
          return await this.runLocked(session, size, throttle, options.vacuum ?? true, onBatch);
        } finally {
          this.current = null;
        }
      },
    );
  }

  private async runLocked(
    session: ReturnType<DataSource['createQueryRunner']>,
    size: number,
    throttle: number,
    vacuum: boolean,
    onBatch?: (run: ScavengeRun) => void,
  ): Promise<ScavengeRun> {
    // Tenants deleted and not scavenged yet (docs/tenants.md#deleting-a-tenant), read before the
    // run takes its `through`: every row of theirs is below it, and every batch sees them deleted.
    const tenants = (
      await execute<{ tenant: string }>(session, {
        text: `SELECT tenant FROM ${TABLES.deletedTenants} WHERE scavenged_at IS NULL`,
        values: [],
      })
    ).map((row) => row.tenant);
    const [started] = await execute<ScavengeRunRow>(session, startScavengeRun());
    let run = (this.current = toRun(started));
    // A run resumed had batches before these deletions, maybe: the next whole run records them.
    const coversTenants = run.position === 0 && run.batches === 0 ? tenants : [];
    onBatch?.(run);
    if (run.position > 0)
      this.logger.log(`Scavenge run ${run.id} resumes at index ${run.position} of ${run.through}`);
    try {
      while (run.position < run.through) {
        const batchStarted = performance.now();
        const [batch] = await execute<{
          position: string | null;
          rows: number;
          bytes: string;
        }>(session, scavengeBatch(String(run.id), run.position, size));
        if (batch.position === null)
          throw new Error(`Scavenge run ${run.id} was moved by someone else; run it again`);
        run = this.current = {
          ...run,
          position: toPosition(batch.position),
          rowsErased: run.rowsErased + batch.rows,
          bytesFreed: run.bytesFreed + toPosition(batch.bytes),
          batches: run.batches + 1,
          updatedAt: new Date().toISOString(),
        };
        // Pages kept for catch-up hold these rows as they were: later reads get them erased.
        if (batch.rows > 0) this.router.forgetKeptReads();
        onBatch?.(run);
        // The throttle: rest in proportion to the batch's time, so the run takes its share.
        const rest = throttleRestMs(performance.now() - batchStarted, throttle);
        if (rest > 0 && run.position < run.through)
          await new Promise((resolve) => setTimeout(resolve, rest));
      }
      // Archived segments: their files are written again without what the scavenge erases.
      const archived = await this.archiver.scavengeArchived({ everyChunk: tenants.length > 0 });
      if (archived.rows > 0) {
        this.router.forgetKeptReads();
        await execute(session, {
          text: `UPDATE ${TABLES.scavengeRuns} SET rows_erased = rows_erased + $2, bytes_freed = bytes_freed + $3,
                   updated_at = now() WHERE id = $1::bigint`,
          values: [String(run.id), archived.rows, archived.bytes],
        });
      }
      // Every row of these tenants is erased now, in the table and in the archive.
      if (coversTenants.length > 0)
        await execute(session, {
          text: `UPDATE ${TABLES.deletedTenants} SET scavenged_at = now()
                 WHERE tenant = ANY($1::text[]) AND scavenged_at IS NULL`,
          values: [coversTenants],
        });
      // VACUUM cannot run in a transaction; on its own connection's autocommit it can.
      if (vacuum) await session.query('VACUUM messages');
      const [finished] = await execute<ScavengeRunRow>(
        session,
        finishScavengeRun(String(run.id), null),
      );
      run = toRun(finished);
      this.logger.log(
        `Scavenge run ${run.id} finished: ${run.rowsErased} rows erased, ${run.bytesFreed} bytes freed, up to index ${run.through}`,
      );
      return run;
    } catch (error) {
      this.logger.warn(
        `Scavenge run ${run.id} stopped at index ${run.position}: ${(error as Error).message}; running it again resumes there`,
      );
      throw error;
    }
  }
}
