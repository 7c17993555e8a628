import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execute, OrdinalError, type SqlQuery, type SqlRunner } from '@ordinal/pg';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import { TABLES } from '../log.constants.js';
import type { ArchiveStore } from './archive-store.js';
import {
  ARCHIVED_RANGE,
  archivedSource,
  isArchivedRange,
  readFrom,
  streamSource,
} from './read-source.js';
import { readMessage } from '../sql/read-message.sql.js';
import type { MessageRow } from '../row-mapper.js';
import {
  archiveCorrupt,
  chunkElements,
  openChunk,
  parseManifest,
  type ArchiveChunk,
  type ChunkElements,
  type SegmentManifest,
} from './archive-format.js';

/** Tries of a read whose guard says the tiers changed (an archive or restore between two tries is rare). */
export const GUARDED_ATTEMPTS = 4;

/** An archived segment as readers use it. */
export interface ArchivedSegment {
  first: number;
  /** One past its last index. */
  end: number;
  manifest: SegmentManifest;
}

/** Where a read of `[from, …]` goes first: the hot table up to `to`, or one archived chunk. */
export type Stretch =
  | { tier: 'hot'; to: number }
  | { tier: 'archived'; segment: ArchivedSegment; chunk: ArchiveChunk; to: number };

/**
 * The archived segments and their rows, for the readers (docs/storage.md, "What each reader
 * sees"). The list is read once and again whenever a read's guard says it changed (SQLSTATE
 * OA001: another process archived or restored a segment); chunks are read from the archive
 * store, checked against the manifest, and the most recently read kept in memory up to
 * `archive.cacheChars`.
 */
@Injectable()
export class ArchivedSegments {
  private segments: ArchivedSegment[] | null = null;
  private loading: Promise<ArchivedSegment[]> | null = null;
  /** Chunks read, least recently used first (a Map keeps insertion order). */
  private readonly cache = new Map<string, Promise<ChunkElements>>();
  private readonly sizes = new Map<string, number>();
  private cachedChars = 0;
  private readonly store: ArchiveStore | null;
  /** Since start: chunk files read from the store (cache misses), and the ones that failed their check. */
  readonly counters = { chunkReads: 0, corruptChunks: 0 };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
  ) {
    this.store = options.archive.store;
  }

  /** The archived segments, oldest first. */
  async list(): Promise<ArchivedSegment[]> {
    if (this.segments) return this.segments;
    this.loading ??= execute<{ first_index: string; end_index: string; manifest: unknown }>(
      this.dataSource.manager,
      {
        text: `SELECT first_index::text, end_index::text, manifest FROM ${TABLES.segments}
               WHERE tier = 'archived' ORDER BY first_index`,
        values: [],
      },
    )
      .then((rows) =>
        rows.map((row) => ({
          first: Number(row.first_index),
          end: Number(row.end_index),
          manifest: parseManifest(row.manifest, `log_segments (segment ${row.first_index})`),
        })),
      )
      .then((segments) => (this.segments = segments))
      .finally(() => (this.loading = null));
    return this.loading;
  }

  /** Forgets the list (a guard said it changed, or this process archived or restored). */
  invalidate(): void {
    this.segments = null;
  }

  /**
   * Where a read from `from` up to `to` goes first: the archived chunk holding `from`
   * (through its end or `to`), or the hot table through `to` or the index before the next
   * archived segment.
   */
  async stretch(from: number, to: number): Promise<Stretch> {
    for (const segment of await this.list()) {
      if (segment.end <= from) continue;
      if (segment.first > from) return { tier: 'hot', to: Math.min(to, segment.first - 1) };
      const span = segment.manifest.chunkSpan;
      const first = segment.first + Math.floor((from - segment.first) / span) * span;
      const chunk = segment.manifest.chunks.find((c) => c.first === first);
      const end = Math.min(first + span, segment.end);
      // A chunk without rows has no file: the read passes it.
      const empty: ArchiveChunk = { file: '', first, end, rows: 0, sha256: '', bytes: 0 };
      return { tier: 'archived', segment, chunk: chunk ?? empty, to: Math.min(to, end - 1) };
    }
    return { tier: 'hot', to };
  }

  /**
   * `index_archived` when `from` is in an archived segment (a request with `tiers=hot` that
   * starts there: an event stream checks before it opens).
   */
  async assertHot(from: number): Promise<void> {
    const stretch = await this.stretch(from, from);
    if (stretch.tier === 'archived') throw indexArchived(from, stretch.segment);
  }

  /**
   * The rows of a chunk (checked against its manifest) as array literal elements, ready to be
   * sent (`archivedSource`): an `archive_corrupt` error otherwise.
   */
  async rows(segment: ArchivedSegment, chunk: ArchiveChunk): Promise<ChunkElements> {
    if (chunk.rows === 0) return { indices: [], elements: [], chars: 0 };
    // By content too: a segment restored, scavenged and archived again has files of the same
    // names and other rows.
    const key = `${chunk.file}#${chunk.sha256}`;
    const held = this.cache.get(key);
    if (held) {
      this.cache.delete(key);
      this.cache.set(key, held);
      return held;
    }
    const loading = this.load(segment.manifest, chunk);
    this.cache.set(key, loading);
    loading.then(
      (rows) => {
        if (this.cache.get(key) !== loading) return;
        this.sizes.set(key, rows.chars);
        this.cachedChars += rows.chars;
        this.evict();
      },
      () => this.cache.delete(key),
    );
    return loading;
  }

  /**
   * The archived chunks holding rows of `streamId` and their rows (every row of those chunks
   * whose text may be the stream's, as array literal elements: the read's own conditions pick
   * them).
   */
  async streamRows(streamId: string): Promise<{ chunks: number[]; elements: string[] }> {
    const found = await execute<{ chunk_first: string }>(this.dataSource.manager, {
      text: `SELECT chunk_first::text FROM ${TABLES.archivedStreamChunks}
             WHERE stream_id = $1 ORDER BY chunk_first`,
      values: [streamId],
    });
    const chunks = found.map((row) => Number(row.chunk_first));
    const elements: string[] = [];
    // An id that the row text (and its element) writes as it is: a row without it is not the stream's.
    const plain = /^[A-Za-z0-9_:.@+-]+$/.test(streamId);
    const segments = await this.list();
    for (const first of chunks) {
      const segment = segments.find((s) => s.first <= first && first < s.end);
      const chunk = segment?.manifest.chunks.find((c) => c.first === first);
      // A chunk of a segment this process does not know as archived yet: the guard says so.
      if (!segment || !chunk) {
        this.invalidate();
        continue;
      }
      for (const element of (await this.rows(segment, chunk)).elements)
        if (!plain || element.includes(streamId)) elements.push(element);
    }
    return { chunks, elements };
  }

  /**
   * Runs a read of one stream (`query`, whose parameter `streamParam` is the stream's id) over
   * its hot rows and, when its guard says the stream has archived rows, those too. `runner`
   * runs each try: a runner, or a function (a tenant's session, `TenantSessions.read`).
   */
  async readStream<R>(
    runner: SqlRunner | ((query: SqlQuery) => Promise<R[]>),
    streamId: string,
    query: SqlQuery,
    streamParam = '$1',
  ): Promise<R[]> {
    const run =
      typeof runner === 'function' ? runner : (read: SqlQuery) => execute<R>(runner, read);
    let archived: { chunks: number[]; elements: string[] } = { chunks: [], elements: [] };
    for (let attempt = 1; ; attempt++) {
      try {
        return await run(
          readFrom(query, streamSource(streamParam, archived.chunks, archived.elements)),
        );
      } catch (error) {
        if (!isArchivedRange(error) || attempt === GUARDED_ATTEMPTS) throw error;
        archived = await this.streamRows(streamId);
      }
    }
  }

  /** The row of the message at `index` in an archived segment (null when none is archived there or the index holds no row). */
  async message(index: number): Promise<MessageRow | null> {
    for (let attempt = 1; ; attempt++) {
      const stretch = await this.stretch(index, index);
      if (stretch.tier === 'hot') return null;
      const chunk = await this.rows(stretch.segment, stretch.chunk);
      const at = chunk.indices.indexOf(index);
      if (at < 0) return null;
      try {
        const [row] = await execute<MessageRow>(
          this.dataSource.manager,
          readFrom(
            readMessage(index),
            archivedSource(stretch.segment.first, stretch.segment.manifest.sha256, [
              chunk.elements[at],
            ]),
          ),
        );
        return row ?? null;
      } catch (error) {
        if (!isArchivedRange(error) || attempt === GUARDED_ATTEMPTS) throw error;
        this.invalidate();
      }
    }
  }

  /** The store, or `archive_not_configured`. */
  requireStore(): ArchiveStore {
    if (this.store) return this.store;
    throw new OrdinalError(
      'archive_not_configured',
      'The log has archived segments, or was asked to archive one, but no archive store is configured (the server: ORDINAL_ARCHIVE_DIR; the framework: log.archive.store)',
    );
  }

  private async load(manifest: SegmentManifest, chunk: ArchiveChunk): Promise<ChunkElements> {
    let file: Buffer;
    try {
      file = await this.requireStore().get(chunk.file);
    } catch (error) {
      if (error instanceof OrdinalError) throw error;
      // A file a scavenge replaced (and deleted) since this process read the manifest: the
      // read starts again from the current one.
      if (await this.manifestChanged(manifest))
        throw Object.assign(new Error(`The archive of ${manifest.table} changed`), {
          code: ARCHIVED_RANGE,
        });
      this.counters.corruptChunks++;
      throw archiveCorrupt(manifest, chunk, `cannot be read (${(error as Error).message})`);
    }
    this.counters.chunkReads++;
    try {
      const rows = chunkElements(await openChunk(manifest, chunk, file));
      if (rows.elements.length !== chunk.rows)
        throw archiveCorrupt(
          manifest,
          chunk,
          `holds ${rows.elements.length} rows, not ${chunk.rows}`,
        );
      return rows;
    } catch (error) {
      this.counters.corruptChunks++;
      throw error;
    }
  }

  private async manifestChanged(manifest: SegmentManifest): Promise<boolean> {
    const [row] = await execute<{ checksum: string | null }>(this.dataSource.manager, {
      text: `SELECT manifest->>'sha256' AS checksum FROM ${TABLES.segments}
             WHERE first_index = $1 AND tier = 'archived'`,
      values: [manifest.firstIndex],
    });
    return row?.checksum !== manifest.sha256;
  }

  private evict(): void {
    for (const key of this.cache.keys()) {
      if (this.cachedChars <= this.options.archive.cacheChars) return;
      const size = this.sizes.get(key);
      if (size === undefined) continue;
      this.cache.delete(key);
      this.sizes.delete(key);
      this.cachedChars -= size;
    }
  }
}

/** The refusal of a `tiers=hot` read that reached an archived segment. */
export function indexArchived(from: number, segment: ArchivedSegment): OrdinalError {
  return new OrdinalError(
    'index_archived',
    `Index ${from} is in the segment ${segment.first}..${segment.end - 1}, which is archived: read without tiers=hot to read it from the archive store (more slowly), or restore the segment (ordinal segments restore ${segment.first})`,
  );
}
