import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { DataSource } from 'typeorm';
import type { SegmentInfo } from '@ordinal/contract';
import { DatabaseUnavailableError, driverError, OrdinalError, type SqlQuery } from '@ordinal/pg';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import { LOCKS, TABLES } from '../log.constants.js';
import { throttlePercent, type ResolvedLogOptions } from '../log-options.js';
import { throttleRestMs } from '../scavenge/throttle.js';
import { LOG_MIGRATIONS } from '../migrations/index.js';
import { listenerClientConfig } from '../router/listener-config.js';
import { LogReader } from '../reader/log-reader.service.js';
import { SegmentKeeper } from '../segments/segment-keeper.service.js';
import { addSegment } from '../segments/segments.sql.js';
import { hiddenReason } from '../sql/hidden-reason.sql.js';
import type { ArchiveStore } from './archive-store.js';
import {
  ARCHIVE_FORMAT,
  chunkRows,
  currentColumnCount,
  compressChunk,
  countRows,
  escapeCopyText,
  openChunk,
  parseManifest,
  segmentChecksum,
  sha256,
  type ArchiveChunk,
  type ChunkRows,
  type SegmentManifest,
} from './archive-format.js';
import { ArchivedSegments, type ArchivedSegment } from './archived-segments.service.js';

/** SQLSTATE of a lock wait past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

/** How long the final step (detach, drop; attach) waits for `messages` at a time (ms). */
const SWAP_LOCK_TIMEOUT_MS = 2000;

/** How often the final step tries for `messages` before the archive (or restore) gives up. */
const SWAP_TRIES = 10;

/** Rows per insert of a restore. */
const RESTORE_BATCH = 2000;

/** What a verify found (`ordinal segments verify N`). */
export interface SegmentVerification {
  firstIndex: number;
  ok: boolean;
  rows: number;
  chunks: { file: string; ok: boolean; error?: string }[];
}

interface SegmentState {
  first_index: string;
  end_index: string;
  table_name: string;
  tier: string;
  manifest: unknown;
}

/**
 * Archives sealed segments to the archive store and restores them (docs/storage.md,
 * "Archive"). An archive is one transaction on a connection of its own: the segment is locked
 * against changes (SHARE), its rows are exported in index order to chunk files, the files are
 * read back and checked, and only then the segment is detached and dropped and recorded as
 * archived. A crash anywhere before the commit rolls it all back (the segment stays hot; files
 * written are replaced by the next try); after it, the segment is archived and verified.
 * A restore is the mirror: the files are checked, loaded into a new table, and attached.
 */
@Injectable()
export class SegmentArchiver implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SegmentArchiver.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly archived: ArchivedSegments,
    private readonly reader: LogReader,
    private readonly segments: SegmentKeeper,
  ) {}

  /** Starts the schedule (`archive.checkMs`) when a store is configured on a primary. */
  onApplicationBootstrap(): void {
    const { store, checkMs } = this.options.archive;
    if (!store || checkMs <= 0 || this.options.role !== 'primary') return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.archiveDue()
        .catch((error: unknown) => {
          // Another process runs one (or a scavenge runs): that one goes on.
          if ((error as { code?: string }).code === 'segment_busy') return;
          this.logger.warn(`Scheduled archive failed (tried again later): ${String(error)}`);
        })
        .finally(() => (this.running = null));
    }, checkMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /**
   * Archives every hot segment that is sealed and older than `archive.afterMs`, oldest first
   * (the schedule; also `POST /api/admin/segments/archive-due`). Returns what it archived.
   */
  async archiveDue(): Promise<SegmentInfo[]> {
    const done: SegmentInfo[] = [];
    for (const segment of await this.segments.list()) {
      if (segment.tier !== 'hot') continue;
      const refusal = await this.whyNotSealed(segment.firstIndex, segment.lastIndex + 1);
      if (refusal) break;
      done.push(await this.archive(segment.firstIndex));
    }
    return done;
  }

  /**
   * Archives the segment starting at `firstIndex` (it must be hot and sealed), working
   * `throttlePercent` of its time (default `archive.throttlePercent`; 100: full speed).
   */
  async archive(
    firstIndex: number,
    options: { throttlePercent?: number } = {},
  ): Promise<SegmentInfo> {
    const store = this.archived.requireStore();
    const throttle = throttlePercent(
      options.throttlePercent ?? this.options.archive.throttlePercent,
      { option: 'throttlePercent' },
    );
    return this.locked(async (client, run) => {
      const segment = await this.segmentAt(run, firstIndex);
      if (segment.tier !== 'hot') throw notArchivable(firstIndex, `it is already ${segment.tier}`);
      const first = Number(segment.first_index);
      const end = Number(segment.end_index);
      const why = await this.whyNotSealed(first, end);
      if (why) throw notArchivable(firstIndex, why);
      const started = Date.now();
      const manifest = await inTransaction(run, async () => {
        await run({ text: `SET LOCAL lock_timeout = '${SWAP_LOCK_TIMEOUT_MS}ms'`, values: [] });
        // No change to its rows (a scavenge, a redaction) until the segment is gone.
        await run({ text: `LOCK TABLE ${segment.table_name} IN SHARE MODE`, values: [] });
        const exported = await this.export(client, store, segment.table_name, first, end, throttle);
        await this.check(store, exported, throttle);
        await run({
          text: `INSERT INTO ${TABLES.archivedStreamChunks} (stream_id, chunk_first)
                 SELECT DISTINCT stream_id, $1::bigint + ((index - $1::bigint) / $3::bigint) * $3::bigint
                 FROM ${TABLES.messages} WHERE index >= $1 AND index < $2 AND stream_id IS NOT NULL
                 ON CONFLICT DO NOTHING`,
          values: [first, end, exported.chunkSpan],
        });
        await this.swap(run, [
          `ALTER TABLE ${TABLES.messages} DETACH PARTITION ${segment.table_name}`,
        ]);
        await run({ text: `DROP TABLE ${segment.table_name}`, values: [] });
        await run({
          text: `UPDATE ${TABLES.segments} SET tier = 'archived', manifest = $2, archived_at = now()
                 WHERE first_index = $1`,
          values: [first, JSON.stringify(exported)],
        });
        return exported;
      });
      this.archived.invalidate();
      this.logger.log(
        `Segment ${segment.table_name} archived: ${manifest.rows} rows in ${manifest.chunks.length} files, ${manifest.bytes} bytes, ${Date.now() - started} ms`,
      );
      return this.info(first);
    });
  }

  /** Restores the archived segment starting at `firstIndex` from its files (checked first). */
  async restore(firstIndex: number): Promise<SegmentInfo> {
    const store = this.archived.requireStore();
    return this.locked(async (_client, run) => {
      const segment = await this.segmentAt(run, firstIndex);
      if (segment.tier !== 'archived')
        throw notArchivable(firstIndex, `it is ${segment.tier}, not archived`);
      const manifest = parseManifest(segment.manifest, `log_segments (segment ${firstIndex})`);
      const first = Number(segment.first_index);
      const end = Number(segment.end_index);
      const started = Date.now();
      await inTransaction(run, async () => {
        const [create, comment] = addSegment(segment.table_name, first, end);
        await run(create);
        await run(comment);
        let rows = 0;
        for (const chunk of manifest.chunks) {
          const text = await openChunk(manifest, chunk, await store.get(chunk.file));
          const read = chunkRows(text).rows;
          for (let i = 0; i < read.length; i += RESTORE_BATCH) {
            await run({
              text: `INSERT INTO ${segment.table_name} SELECT * FROM unnest($1::${TABLES.messages}[])`,
              values: [read.slice(i, i + RESTORE_BATCH)],
            });
          }
          rows += read.length;
        }
        if (rows !== manifest.rows)
          throw new OrdinalError(
            'archive_corrupt',
            `The archive of segment ${segment.table_name} holds ${rows} rows, its manifest ${manifest.rows}: nothing was restored`,
          );
        // A validated CHECK of the range: ATTACH then scans nothing.
        await run({
          text: `ALTER TABLE ${segment.table_name} ADD CONSTRAINT ${segment.table_name}_range
                 CHECK (index IS NOT NULL AND index >= ${first} AND index < ${end})`,
          values: [],
        });
        await this.swap(run, [
          `ALTER TABLE ${TABLES.messages} ATTACH PARTITION ${segment.table_name} FOR VALUES FROM (${first}) TO (${end})`,
        ]);
        await run({
          text: `DELETE FROM ${TABLES.archivedStreamChunks} WHERE chunk_first >= $1 AND chunk_first < $2`,
          values: [first, end],
        });
        await run({
          text: `UPDATE ${TABLES.segments} SET tier = 'hot' WHERE first_index = $1`,
          values: [first],
        });
      });
      this.archived.invalidate();
      this.logger.log(
        `Segment ${segment.table_name} restored: ${manifest.rows} rows, ${Date.now() - started} ms`,
      );
      return this.info(first);
    });
  }

  /** Reads every file of an archived segment back and checks it against the manifest. */
  async verify(firstIndex: number): Promise<SegmentVerification> {
    const store = this.archived.requireStore();
    return this.locked(async (_client, run) => {
      const segment = await this.segmentAt(run, firstIndex);
      if (segment.tier !== 'archived')
        throw notArchivable(firstIndex, `it is ${segment.tier}: only archived segments have files`);
      const manifest = parseManifest(segment.manifest, `log_segments (segment ${firstIndex})`);
      const chunks: SegmentVerification['chunks'] = [];
      const checksums: string[] = [];
      let rows = 0;
      for (const chunk of manifest.chunks) {
        try {
          const text = await openChunk(manifest, chunk, await store.get(chunk.file));
          const count = countRows(text);
          if (count !== chunk.rows)
            throw new Error(`holds ${count} rows, its manifest ${chunk.rows}`);
          checksums.push(sha256(text));
          rows += count;
          chunks.push({ file: chunk.file, ok: true });
        } catch (error) {
          chunks.push({ file: chunk.file, ok: false, error: (error as Error).message });
        }
      }
      const ok =
        chunks.every((c) => c.ok) &&
        rows === manifest.rows &&
        segmentChecksum(checksums) === manifest.sha256;
      if (!ok) this.logger.error(`Archive of segment ${segment.table_name} failed its check`);
      return { firstIndex: Number(segment.first_index), ok, rows, chunks };
    });
  }

  /**
   * A scavenge's pass over the archive (docs/storage.md, "Lifecycle and personal data"), run by
   * the scavenge while it holds its lock (no archive or restore runs meanwhile): every chunk of
   * an archived segment holding rows of a stream with a lifecycle (its own state, or its
   * category's rules) is read, and when rows in it are hidden and not erased yet, it is written
   * again with them erased as the scavenge erases rows in the table (body `null`, no metadata,
   * `erased` = why), under a new name. The manifest moves in `log_segments` (readers holding the
   * old one find out by their guard), then the old files go, and any file of an archived
   * segment that its manifest does not name (left by a crash) with them: no erased body stays
   * in the archive store.
   *
   * With `everyChunk` (a tenant was deleted since the last full scavenge,
   * docs/tenants.md#deleting-a-tenant), every chunk is read: a tenant's rows outside any stream
   * are in no stream's list of chunks.
   */
  async scavengeArchived(
    options: { everyChunk?: boolean } = {},
  ): Promise<{ rows: number; bytes: number }> {
    const candidates = new Set(
      (
        await this.dataSource.query<{ chunk_first: string }[]>(
          `SELECT DISTINCT a.chunk_first::text AS chunk_first FROM ${TABLES.archivedStreamChunks} a
           WHERE EXISTS (SELECT 1 FROM ${TABLES.streamStates} st WHERE st.stream_id = a.stream_id)
              OR EXISTS (SELECT 1 FROM ${TABLES.categoryRules} cr
                         WHERE cr.category = CASE WHEN strpos(a.stream_id, '-') = 0 THEN a.stream_id
                                                  ELSE split_part(a.stream_id, '-', 1) END)`,
        )
      ).map((row) => Number(row.chunk_first)),
    );
    const erase = await this.eraseQuery();
    let bytes = 0;
    const rows = await this.rewriteArchived(
      (chunk) => options.everyChunk === true || candidates.has(chunk.first),
      async (held) => {
        const changed = await this.dataSource.query<
          { index: string; text: string; freed: string }[]
        >(erase, [held.rows]);
        bytes += changed.reduce((sum, row) => sum + Number(row.freed), 0);
        return new Map(changed.map((row) => [Number(row.index), row.text]));
      },
      'the scavenge',
    );
    return { rows, bytes };
  }

  /**
   * Writes archived chunks again (a scavenge, a redaction of personal data): every chunk
   * `pick` chooses is read (checked), `rewrite` gives the new text of the rows it changes (by
   * index), and a chunk with changes is written under a new name and read back. Each segment's
   * manifest then moves in `log_segments` (only from the one read: a concurrent rewrite makes
   * this one fail, to be run again), the store's copy follows, and every file of the segment
   * that its manifest does not name goes (the ones replaced, and any a crash left), so no
   * rewritten value stays in the archive store. Returns the rows changed.
   */
  async rewriteArchived(
    pick: (chunk: ArchiveChunk, segment: ArchivedSegment) => boolean,
    rewrite: (rows: ChunkRows, segment: ArchivedSegment) => Promise<Map<number, string>>,
    by: string,
  ): Promise<number> {
    this.archived.invalidate();
    const segments = await this.archived.list();
    if (segments.length === 0) return 0;
    const store = this.archived.requireStore();
    let rows = 0;
    for (const segment of segments) {
      const manifest = segment.manifest;
      const chunks = [...manifest.chunks];
      let replaced = 0;
      for (const [i, chunk] of chunks.entries()) {
        if (chunk.rows === 0 || !pick(chunk, segment)) continue;
        // The rows' own text (a rewrite keeps the rows it does not change byte for byte).
        const held = chunkRows(await openChunk(manifest, chunk, await store.get(chunk.file)));
        const changed = await rewrite(held, segment);
        if (changed.size === 0) continue;
        const text = Buffer.from(
          held.rows
            .map(
              (row, k) =>
                `${held.indices[k]}\t${escapeCopyText(changed.get(held.indices[k]) ?? row)}\n`,
            )
            .join(''),
        );
        const checksum = sha256(text);
        const compressed = await compressChunk(text);
        const file = `${manifest.table}/${String(chunk.first).padStart(16, '0')}.${checksum.slice(0, 16)}.tsv.gz`;
        await store.put(file, compressed);
        // Its rows have the table's columns now (`openChunk` added any the chunk lacked).
        const written = {
          ...chunk,
          file,
          sha256: checksum,
          bytes: compressed.length,
          columns: currentColumnCount(manifest),
        };
        if (
          chunkRows(await openChunk(manifest, written, await store.get(file))).rows.length !==
          chunk.rows
        )
          throw new Error(`The rewritten archive file ${file} did not read back`);
        chunks[i] = written;
        replaced++;
        rows += changed.size;
      }
      let current = manifest;
      if (replaced > 0) {
        current = {
          ...manifest,
          chunks,
          sha256: segmentChecksum(chunks.map((c) => c.sha256)),
          bytes: chunks.reduce((sum, c) => sum + c.bytes, 0),
        };
        const updated = await this.dataSource.query<unknown[]>(
          `UPDATE ${TABLES.segments} SET manifest = $2
           WHERE first_index = $1 AND tier = 'archived' AND manifest->>'sha256' = $3 RETURNING 1`,
          [segment.first, JSON.stringify(current), manifest.sha256],
        );
        if (updated.length === 0)
          throw new Error(`The archive of ${manifest.table} changed during ${by}; run it again`);
        await store.put(
          `${manifest.table}/manifest.json`,
          Buffer.from(JSON.stringify(current, null, 2)),
        );
        this.logger.log(
          `Archived segment ${manifest.table}: ${replaced} files written again by ${by}`,
        );
      }
      const named = new Set([
        ...current.chunks.map((c) => c.file),
        `${manifest.table}/manifest.json`,
      ]);
      for (const name of await store.list(manifest.table))
        if (!named.has(name)) await store.delete(name);
    }
    this.archived.invalidate();
    return rows;
  }

  /**
   * The rows of a chunk (`$1`, their text) that a scavenge erases, erased: the same hidden
   * reason as every reader's and the same erasure as the table's (scavenge.sql.ts).
   */
  private async eraseQuery(): Promise<string> {
    const row = await this.rowText({
      body: `'null'::jsonb`,
      metadata: 'NULL::jsonb',
      erased: 'r.reason',
    });
    return `SELECT x.index::text AS index, ${row} AS text,
                   greatest(pg_column_size(x.body) + coalesce(pg_column_size(x.metadata), 0)
                            - pg_column_size('null'::jsonb), 0)::text AS freed
            FROM unnest($1::${TABLES.messages}[]) x, LATERAL (SELECT ${hiddenReason('x')} AS reason) r
            WHERE x.erased IS NULL AND r.reason IS NOT NULL`;
  }

  /**
   * SQL for the text of the messages row `x` with some columns replaced (`replace`: column to
   * SQL expression), every other column as it is: what a rewrite of archived rows writes.
   */
  async rowText(replace: Record<string, string>): Promise<string> {
    const columns = await this.columns();
    const values = columns.map((column) => replace[column] ?? `x.${column}`);
    return `ROW(${values.join(', ')})::${TABLES.messages}::text`;
  }

  /** The messages table's columns, in order (names from the catalog, checked before they go into SQL). */
  private async columns(): Promise<string[]> {
    const rows = await this.dataSource.query<{ name: string }[]>(
      `SELECT attname AS name FROM pg_attribute
       WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      [TABLES.messages],
    );
    return rows.map(({ name }) => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Unexpected column name ${name}`);
      return name;
    });
  }

  /**
   * Why the segment `[first, end)` cannot be archived yet, or null: it must lie below the safe
   * head (in concurrent mode the watermark), no position in it may be watched for a late row,
   * and its newest message must be older than `archive.afterMs`.
   */
  private async whyNotSealed(first: number, end: number): Promise<string | null> {
    const head = await this.reader.safeHead();
    if (end - 1 > head)
      return `it is not sealed: it ends at ${end - 1}, above the log's safe head ${head}`;
    if (await this.reader.lateRowPossibleAtOrBelow(end - 1))
      return 'positions in it are still watched for late rows (concurrent mode, ORDINAL_LATE_WATCH_MS)';
    const [{ newest }] = await this.dataSource.query<{ newest: Date | null }[]>(
      `SELECT max(created_at) AS newest FROM ${TABLES.messages} WHERE index >= $1 AND index < $2`,
      [first, end],
    );
    const afterMs = this.options.archive.afterMs;
    if (newest && Date.now() - new Date(newest).getTime() < afterMs)
      return `its newest message (${new Date(newest).toISOString()}) is younger than the archive age (${afterMs} ms, ORDINAL_ARCHIVE_AFTER_MS)`;
    return null;
  }

  /**
   * Exports the segment's rows in index order, one `COPY … TO` per chunk file of
   * `archive.chunkSpan` indices, each compressed and stored, then the manifest. Each COPY is
   * a statement of its own (read committed: its snapshot ends with it), so the rests of the
   * throttle between them hold back no vacuum; the SHARE lock keeps the rows as they are.
   */
  private async export(
    client: pg.Client,
    store: ArchiveStore,
    table: string,
    first: number,
    end: number,
    throttle: number,
  ): Promise<SegmentManifest> {
    const span = this.options.archive.chunkSpan;
    const columns = await this.columns();
    const chunks: ArchiveChunk[] = [];
    let rows = 0;
    // At full speed one chunk is compressed and stored while the next is read.
    let storing: Promise<void> = Promise.resolve();
    const pace = new Pace(throttle);
    for (let at = first; at < end; at += span) {
      // Integers from log_segments, never input (COPY takes no parameters).
      const text = await copyOut(
        client,
        `COPY (SELECT index, m::text FROM ${TABLES.messages} m
               WHERE index >= ${at} AND index < ${Math.min(at + span, end)} ORDER BY index) TO STDOUT`,
      );
      // A chunk without rows has no file.
      if (text.length > 0) {
        const count = countRows(text);
        rows += count;
        await storing;
        storing = (async () => {
          const file = `${table}/${String(at).padStart(16, '0')}.tsv.gz`;
          const compressed = await compressChunk(text);
          await store.put(file, compressed);
          chunks.push({
            file,
            first: at,
            end: Math.min(at + span, end),
            rows: count,
            sha256: sha256(text),
            bytes: compressed.length,
          });
        })();
        // A failure surfaces when it is awaited; meanwhile it is not unhandled.
        storing.catch(() => undefined);
      }
      if (pace.throttled) {
        // A throttled chunk's work is done before it rests.
        await storing;
        await pace.rest();
      }
    }
    await storing;
    const manifest: SegmentManifest = {
      format: ARCHIVE_FORMAT,
      table,
      firstIndex: first,
      endIndex: end,
      rows,
      sha256: segmentChecksum(chunks.map((c) => c.sha256)),
      bytes: chunks.reduce((sum, c) => sum + c.bytes, 0),
      columns,
      schemaVersion: LOG_MIGRATIONS[LOG_MIGRATIONS.length - 1].name,
      chunkSpan: span,
      chunks,
      archivedAt: new Date().toISOString(),
    };
    await store.put(`${table}/manifest.json`, Buffer.from(JSON.stringify(manifest, null, 2)));
    return manifest;
  }

  /** Reads every file back: each must match its checksum and row count, and the manifest what was written. */
  private async check(
    store: ArchiveStore,
    manifest: SegmentManifest,
    throttle: number,
  ): Promise<void> {
    const checksums: string[] = [];
    let rows = 0;
    const pace = new Pace(throttle);
    for (const chunk of manifest.chunks) {
      const text = await openChunk(manifest, chunk, await store.get(chunk.file));
      rows += countRows(text);
      checksums.push(sha256(text));
      await pace.rest();
    }
    const stored = parseManifest(
      (await store.get(`${manifest.table}/manifest.json`)).toString('utf8'),
      `${manifest.table}/manifest.json`,
    );
    if (
      rows !== manifest.rows ||
      segmentChecksum(checksums) !== manifest.sha256 ||
      stored.sha256 !== manifest.sha256
    )
      throw new OrdinalError(
        'archive_corrupt',
        `The archive of ${manifest.table} did not read back as written (${rows} rows of ${manifest.rows}): nothing was archived`,
      );
  }

  /** Runs DDL that needs `messages` exclusively, a short wait at a time, under a savepoint. */
  private async swap(
    run: (query: SqlQuery) => Promise<unknown[]>,
    statements: string[],
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await run({ text: 'SAVEPOINT swap', values: [] });
      try {
        for (const text of statements) await run({ text, values: [] });
        await run({ text: 'RELEASE SAVEPOINT swap', values: [] });
        return;
      } catch (error) {
        await run({ text: 'ROLLBACK TO SAVEPOINT swap', values: [] });
        if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE || attempt === SWAP_TRIES)
          throw error;
      }
    }
  }

  /**
   * Runs `work` on a connection of its own holding the archive's session lock, and the
   * scavenge's and the redaction's (neither may change a segment's rows meanwhile):
   * `segment_busy` when another holds one. A crash of this process ends the connection: its
   * transaction rolls back and the locks go.
   */
  private async locked<T>(
    work: (client: pg.Client, run: (query: SqlQuery) => Promise<unknown[]>) => Promise<T>,
  ): Promise<T> {
    if (this.options.role === 'replica-reader')
      throw new OrdinalError(
        'read_only_replica',
        'A replica reader does not archive or restore segments',
      );
    const client = new pg.Client({
      ...listenerClientConfig(this.dataSource),
      application_name: 'ordinal-archive',
    });
    client.on('error', () => undefined);
    await client.connect().catch((error: unknown) => {
      throw new DatabaseUnavailableError(
        `The database is unavailable (${driverError(error).message}); retry later`,
        false,
        { cause: error },
      );
    });
    const run = async (query: SqlQuery): Promise<unknown[]> =>
      (await client.query<Record<string, unknown>>(query.text, query.values)).rows;
    try {
      const [{ archive, scavenge, redact }] = (await run({
        text: `SELECT pg_try_advisory_lock($1::bigint) AS archive, pg_try_advisory_lock($2::bigint) AS scavenge,
                      pg_try_advisory_lock($3::bigint) AS redact`,
        values: [LOCKS.archive, LOCKS.scavenge, LOCKS.redact],
      })) as { archive: boolean; scavenge: boolean; redact: boolean }[];
      if (!archive || !scavenge || !redact)
        throw new OrdinalError(
          'segment_busy',
          `${!archive ? 'Another archive, restore or verify' : !scavenge ? 'A scavenge' : 'A redaction of personal data'} is running; retry once it ends`,
        );
      return await work(client, run);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private async segmentAt(
    run: (query: SqlQuery) => Promise<unknown[]>,
    firstIndex: number,
  ): Promise<SegmentState> {
    const [segment] = (await run({
      text: `SELECT first_index::text, end_index::text, table_name, tier, manifest
             FROM ${TABLES.segments} WHERE first_index = $1`,
      values: [firstIndex],
    })) as SegmentState[];
    if (!segment)
      throw new OrdinalError(
        'segment_not_found',
        `No segment starts at index ${firstIndex} (GET /api/admin/segments lists them)`,
      );
    return segment;
  }

  private async info(first: number): Promise<SegmentInfo> {
    const found = (await this.segments.list()).find((s) => s.firstIndex === first);
    if (!found) throw new Error(`segment ${first} vanished`);
    return found;
  }
}

/** Runs `work` in one transaction on the archiver's connection: committed, or rolled back and rethrown. */
async function inTransaction<T>(
  run: (query: SqlQuery) => Promise<unknown[]>,
  work: () => Promise<T>,
): Promise<T> {
  await run({ text: 'BEGIN', values: [] });
  try {
    const result = await work();
    await run({ text: 'COMMIT', values: [] });
    return result;
  } catch (error) {
    await run({ text: 'ROLLBACK', values: [] }).catch(() => undefined);
    throw error;
  }
}

/** The text `sql` (a `COPY … TO STDOUT`) writes, whole. */
async function copyOut(client: pg.Client, sql: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const data of client.query(copyTo(sql)) as AsyncIterable<Buffer>) parts.push(data);
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/** A throttle (`archive.throttlePercent`): each `rest()` rests in proportion to the work since the last. */
class Pace {
  private since = performance.now();

  constructor(private readonly percent: number) {}

  get throttled(): boolean {
    return this.percent < 100;
  }

  async rest(): Promise<void> {
    const ms = throttleRestMs(performance.now() - this.since, this.percent);
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    this.since = performance.now();
  }
}

function notArchivable(firstIndex: number, why: string): OrdinalError {
  return new OrdinalError(
    'segment_not_archivable',
    `The segment from ${firstIndex} cannot move: ${why}`,
  );
}
