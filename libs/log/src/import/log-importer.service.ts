import { SegmentKeeper, type SqlRun } from '../segments/segment-keeper.service.js';
import { ArchivedSegments } from '../archive/archived-segments.service.js';
import { TABLES } from '../log.constants.js';
import { lockSegments } from '../segments/segments.sql.js';
import { Inject, Injectable, Logger } from '@nestjs/common';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { DataSource } from 'typeorm';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import {
  ImportIdleError,
  ImportLineError,
  InvalidMessageError,
  LogFullError,
} from '../errors/index.js';
import { DatabaseUnavailableError, OrdinalError, ReadOnlyReplicaError } from '@ordinal/pg';
import {
  copyImportRows,
  finishImport,
  importRowText,
  lockForImport,
  readByIdempotencyKeys,
} from '../sql/index.js';
import { execute } from '@ordinal/pg';
import { toStoredMessage, type MessageRow } from '../row-mapper.js';
import { MAX_POSITION, toPosition } from '@ordinal/pg';
import { listenerClientConfig } from '../router/listener-config.js';
import {
  driverError,
  insufficientResources,
  isConnectionError,
  isReadOnlyError,
} from '@ordinal/pg';
import type { ImportedMessage as PreparedMessage } from '../writer/pending-append.js';
import { parseImportLine } from './import-line.js';
import { PersonalData } from '../personal/personal-data.service.js';
import { LineRefused, ndjsonLines } from './ndjson-lines.js';
import { sameMessage, type KeyedMessage } from './same-message.js';
import { currentCorrelation, type CorrelationContext } from '../trace/correlation-context.js';
import type { NewMessage } from '../message.js';
import type { ImportResult } from '@ordinal/contract';

/** A line's ids, with the same precedence as prepareMessage: its own, else the import's. */
function messageLineage(
  message: NewMessage,
  lineage: CorrelationContext,
): { correlationId: string; causationId: string; traceparent: string | null } {
  const correlationId = message.correlationId ?? lineage.correlationId;
  const causationId =
    message.causationId ?? (message.correlationId ? message.correlationId : lineage.causationId);
  return { correlationId, causationId, traceparent: lineage.traceparent };
}

export interface ImportOptions {
  /** Longest line accepted, in bytes. @default 1048576 */
  maxLineBytes?: number;
  /**
   * The correlation of the imported messages (the server passes its request's). A line's own
   * `correlationId`/`causationId` win, as in a batch. @default the current handler's context, else none
   */
  correlation?: CorrelationContext | null;
  /**
   * Longest the input may send nothing (ms), between two chunks or before the first: past it
   * the import rejects with an `ImportIdleError` and nothing is stored, so a paused client
   * cannot hold every other writer (an import holds the log while it runs). Time spent waiting
   * for the database does not count. 0: no bound. @default 10000
   */
  idleTimeoutMs?: number;
}

/** `ImportOptions.idleTimeoutMs` when not given. */
const DEFAULT_IDLE_TIMEOUT_MS = 10_000;

/** `next` of the input, rejected with an ImportIdleError when it sends nothing for `idleMs` (0: never). */
function nextWithin<T>(next: Promise<T>, idleMs: number, lines: () => number): Promise<T> {
  if (idleMs <= 0) return next;
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ImportIdleError(idleMs, lines())), idleMs);
  });
  return Promise.race([next, idle]).finally(() => clearTimeout(timer));
}

/**
 * Bulk import: NDJSON lines, one message each, checked as every entry path checks a message,
 * streamed into the log with one `COPY` in one transaction. The import takes one contiguous
 * range of indices under the log's rules (see `lockForImport`), so other writers wait while
 * it runs; a bad line (or a lost connection) rolls all of it back. The duplicate window does
 * not apply (bulk data legitimately repeats bodies); idempotency keys do: a line whose key is
 * stored for the same message is skipped as a repeat, one stored for another message refuses
 * the import. Readers learn of it by the NOTIFY its commit sends, as of any commit.
 */
@Injectable()
export class LogImporter {
  private readonly logger = new Logger(LogImporter.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly personal: PersonalData,
    private readonly segments: SegmentKeeper,
    private readonly archived: ArchivedSegments,
  ) {}

  /** Imports every line of `source`; resolves once committed, rejects with nothing stored. */
  async import(
    source: AsyncIterable<Buffer | string>,
    options: ImportOptions = {},
  ): Promise<ImportResult> {
    if (this.options.role === 'replica-reader') throw new ReadOnlyReplicaError();
    const client = new pg.Client({
      ...listenerClientConfig(this.dataSource),
      application_name: 'ordinal-import',
    });
    let lost: Error | null = null;
    client.on('error', (error) => (lost ??= error));
    await client.connect().catch((error: unknown) => {
      throw new DatabaseUnavailableError(
        `The database is unavailable (${driverError(error).message}); nothing was imported, retry later`,
        false,
        { cause: error },
      );
    });
    let commitSent = false;
    try {
      await client.query('BEGIN');
      const run: SqlRun = async (query) =>
        (await client.query<Record<string, unknown>>(query.text, query.values)).rows;
      // The segments' lock before the log's, as every process adding segments takes them: the
      // import adds the segments its rows need in its own transaction (a COPY routes its rows
      // to the partitions there were when it began).
      await run(lockSegments());
      let base = 0;
      for (const statement of lockForImport(this.options.ordering)) {
        const { rows } = await client.query<{ base?: string }>(statement.text, statement.values);
        if (rows[0]?.base !== undefined) base = toPosition(rows[0].base);
      }
      // As every append: the given correlation (the request's), else the handler's, else a new one for the whole import.
      const given =
        options.correlation === undefined
          ? currentCorrelation()
          : (options.correlation ?? undefined);
      const correlationId = given?.correlationId ?? randomUUID();
      const lineage: CorrelationContext = {
        correlationId,
        causationId: given?.causationId ?? correlationId,
        traceparent: given?.traceparent ?? null,
      };
      const result = await this.copy(
        client,
        run,
        source,
        base,
        options.maxLineBytes ?? 1024 * 1024,
        options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
        lineage,
      );
      if (result.imported > 0) {
        const finish = finishImport(this.options.ordering, result.last!);
        await client.query(finish.text, finish.values);
      }
      commitSent = true;
      await client.query('COMMIT');
      if (result.imported > 0)
        this.logger.log(
          `Imported ${result.imported} messages at ${result.first}..${result.last} (${result.repeats} repeats skipped)`,
        );
      return result;
    } catch (error) {
      if (!commitSent) await client.query('ROLLBACK').catch(() => undefined);
      throw this.toLibraryError(error, commitSent, lost);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Streams the checked rows into COPY; on a refused line, aborts it and reads the rest of the input away. */
  private async copy(
    client: pg.Client,
    run: SqlRun,
    source: AsyncIterable<Buffer | string>,
    base: number,
    maxLineBytes: number,
    idleMs: number,
    lineage: CorrelationContext,
  ): Promise<ImportResult> {
    let covered = await this.segments.coverWithin(run, base + 1);
    let stream = client.query(copyFrom(copyImportRows()));
    let copyDone = finished(stream);
    copyDone.catch(() => undefined);
    const seen = new Map<string, KeyedMessage>();
    const result: ImportResult = { lines: 0, imported: 0, repeats: 0, first: null, last: null };
    let index = base;
    // One iterator, not closed when the lines stop early, so what is left can be read away.
    const iterator = source[Symbol.asyncIterator]();
    const lines = ndjsonLines(
      {
        [Symbol.asyncIterator]: () => ({
          next: () => nextWithin(iterator.next(), idleMs, () => result.lines),
        }),
      },
      maxLineBytes,
    );
    try {
      for await (const chunk of lines) {
        const prepared = new Array<PreparedMessage>(chunk.length);
        for (let i = 0; i < chunk.length; i++) {
          try {
            prepared[i] = parseImportLine(chunk[i].text);
            // A bulk import stores lines as they are: a ruled type would be stored in clear.
            const type = prepared[i].message.messageType;
            if (this.personal.ruleOf(type))
              throw new InvalidMessageError(
                `Message '${type}' has a personal-data rule, and a bulk import does not seal personal fields: publish it through PUT /api/events/message or POST /api/events/messages (docs/personal-data.md)`,
              );
          } catch (error) {
            if (error instanceof InvalidMessageError)
              throw new ImportLineError(chunk[i].number, 'invalid_message', error.message);
            throw error;
          }
        }
        const skip = await this.repeats(
          chunk.map((l) => l.number),
          prepared,
          seen,
        );
        let text = '';
        for (let i = 0; i < prepared.length; i++) {
          if (skip.has(i)) continue;
          const p = prepared[i];
          index += 1;
          if (index > MAX_POSITION)
            throw new LogFullError(`line ${chunk[i].number} would take index ${index}`);
          if (index >= covered) {
            // Past the segments: end this COPY, add the next ones, and go on in a new COPY.
            if (text.length > 0) stream.write(text);
            text = '';
            stream.end();
            await copyDone;
            covered = await this.segments.coverWithin(run, index);
            stream = client.query(copyFrom(copyImportRows()));
            copyDone = finished(stream);
            copyDone.catch(() => undefined);
          }
          text += importRowText({
            index,
            messageType: p.message.messageType,
            userId: p.message.userId ?? null,
            bodyJson: p.bodyJson,
            metadataJson: p.metadataJson,
            contentHash: p.hash,
            idempotencyKey: p.message.idempotencyKey ?? null,
            ...messageLineage(p.message, lineage),
          });
        }
        result.lines += chunk.length;
        result.repeats += skip.size;
        if (text.length > 0 && !stream.write(text))
          await Promise.race([once(stream, 'drain'), copyDone]);
      }
    } catch (error) {
      const refused =
        error instanceof LineRefused
          ? new ImportLineError(error.line, 'invalid_message', error.message)
          : error;
      stream.destroy(refused instanceof Error ? refused : new Error(String(refused)));
      await copyDone.catch(() => undefined);
      if (refused instanceof ImportLineError || refused instanceof LogFullError) {
        // Read the rest away so the client, still sending, gets the answer.
        while (!(await iterator.next()).done);
      }
      throw refused;
    }
    stream.end();
    await copyDone;
    result.imported = index - base;
    if (result.imported > 0) {
      result.first = base + 1;
      result.last = index;
    }
    return result;
  }

  /**
   * The positions in `prepared` to skip as idempotency-key repeats: keys stored before the
   * import (looked up on another connection; writers wait for the import, so what is stored
   * cannot change meanwhile) or earlier in this import. A key used for another message
   * refuses the line.
   */
  private async repeats(
    numbers: number[],
    prepared: PreparedMessage[],
    seen: Map<string, KeyedMessage>,
  ): Promise<Set<number>> {
    const skip = new Set<number>();
    const fresh: string[] = [];
    let keyed = false;
    for (const p of prepared) {
      const key = p.message.idempotencyKey;
      if (!key) continue;
      keyed = true;
      if (!seen.has(key)) fresh.push(key);
    }
    if (!keyed) return skip;
    const stored = new Map<string, KeyedMessage>();
    if (fresh.length > 0) {
      const rows = await execute<MessageRow>(
        this.dataSource.manager,
        readByIdempotencyKeys([...new Set(fresh)]),
      );
      // Keys of messages in archived segments: their rows come from the archive.
      const found = new Set(rows.map((row) => row.idempotency_key));
      const missing = [...new Set(fresh)].filter((key) => !found.has(key));
      if (missing.length > 0 && (await this.archived.list()).length > 0) {
        const keys = await execute<{ index: string }>(this.dataSource.manager, {
          text: `SELECT index::text FROM ${TABLES.messageKeys} WHERE idempotency_key = ANY($1::text[])`,
          values: [missing],
        });
        for (const { index } of keys) {
          const row = await this.archived.message(Number(index));
          if (row) rows.push(row);
        }
      }
      for (const row of rows) {
        const m = toStoredMessage(row);
        stored.set(m.idempotencyKey!, {
          id: m.id,
          messageType: m.messageType,
          userId: m.userId,
          contentHash: m.contentHash,
          metadata: m.metadata,
        });
      }
    }
    prepared.forEach((p, i) => {
      const key = p.message.idempotencyKey;
      if (!key) return;
      const earlier = seen.get(key) ?? stored.get(key);
      const mine: KeyedMessage = {
        id: null,
        messageType: p.message.messageType,
        userId: p.message.userId ?? null,
        contentHash: p.hash,
        metadata: p.message.metadata ?? null,
      };
      if (!earlier) {
        seen.set(key, mine);
        return;
      }
      seen.set(key, earlier);
      if (!sameMessage(earlier, mine)) {
        const where = earlier.id === null ? 'earlier in this import' : `at index ${earlier.id}`;
        throw new ImportLineError(
          numbers[i],
          'idempotency_key_reused',
          `idempotency key '${key}' was used for a different message (${where}); send a new key for a new message`,
        );
      }
      skip.add(i);
    });
    return skip;
  }

  private toLibraryError(error: unknown, commitSent: boolean, lost: Error | null): unknown {
    if (error instanceof OrdinalError) return error;
    if (lost || isConnectionError(error)) {
      const why = driverError(lost ?? error).message;
      return commitSent
        ? new DatabaseUnavailableError(
            `The database did not confirm the import's commit (${why}); it may be stored: check the head before importing again`,
            true,
            { cause: error },
          )
        : new DatabaseUnavailableError(
            `The database is unavailable (${why}); nothing was imported, retry later`,
            false,
            { cause: error },
          );
    }
    if (isReadOnlyError(error)) {
      return new ReadOnlyReplicaError(
        `The database is read-only (a standby?): ${driverError(error).message}; nothing was imported, send imports to the primary`,
        { cause: error },
      );
    }
    const lacking = insufficientResources(error, 'The import');
    if (lacking) return lacking;
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'))) {
      return new InvalidMessageError(
        `The database refused the import: ${driverError(error).message}; nothing was stored`,
        { cause: error },
      );
    }
    this.logger.error(`Import failed: ${driverError(error).message}`);
    return new OrdinalError(
      'import_failed',
      `The import failed: ${driverError(error).message}; nothing was stored`,
      { cause: error },
    );
  }
}
