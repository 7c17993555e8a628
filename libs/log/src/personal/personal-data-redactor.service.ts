import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execute, ReadOnlyReplicaError, toPosition } from '@ordinal/pg';
import { NoPersonalDataRuleError, RedactionRunningError } from '../errors/index.js';
import { LOCKS, TABLES } from '../log.constants.js';
import { SegmentArchiver } from '../archive/segment-archiver.service.js';
import { ArchivedSegments } from '../archive/archived-segments.service.js';
import { archivedSource, readFrom } from '../archive/read-source.js';
import { rowElements } from '../archive/archive-format.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import { whileSessionLocked } from '../sql/session-lock.js';
import type { ResolvedLogOptions } from '../log-options.js';
import { LiveRouter } from '../router/live-router.service.js';
import { PersonalData } from './personal-data.service.js';
import { SubjectErasure } from './subject-erasure.service.js';
import {
  findClearRows,
  readMaxIndex,
  readRedactBatch,
  rewriteRows,
  type RedactRow,
} from './sql/redact.sql.js';

/** Options of one redaction. */
export interface RedactOptions {
  /** Only this message type (it must have a rule). @default every type with a rule */
  messageType?: string;
  /** Indices a batch covers (one short transaction each). @default 1000 */
  batchSize?: number;
}

/** Indices listed at most in a result (the counts are whole). */
const LISTED = 100;
const DEFAULT_BATCH = 1000;

/** What a redaction did, then what its verification scan found (docs/personal-data.md). */
export interface RedactResult {
  /** The message types redacted (each has a rule). */
  messageTypes: string[];
  /** The run walked every index up to this one (the head when it started). */
  through: number;
  batches: number;
  /** Rows of those types read. */
  scanned: number;
  /** Rows rewritten in place: their clear personal fields sealed, replacements in the body. */
  rewritten: number;
  /** Of `rewritten`, rows of an erased subject: replaced, sealed under no key of theirs. */
  rewrittenErased: number;
  /** Rows whose personal fields were all sealed already: untouched. */
  alreadySealed: number;
  /** Rows holding none of the rule's fields: untouched. */
  withoutPersonalFields: number;
  /** Rows that cannot be sealed (their subject is missing): untouched, still in clear. */
  unredactable: number;
  /** The first indices of `unredactable`, with why. */
  unredactableRows: { index: number; reason: string }[];
  /** The scan after the run: rows up to `through` still holding a clear personal value. */
  verification: { clearRows: number; clearIndices: number[]; verified: boolean };
}

/**
 * Rewrites, in place, stored rows of a message type that hold personal fields in clear
 * because they were appended before its rule (docs/personal-data.md#legacy-data-in-clear):
 * each row becomes what an append under the rule would have stored, with its index, stream,
 * version and everything else kept. Walks the log by index in bounded batches, one short
 * transaction each, like the scavenge; one run at a time across every process. Idempotent: a
 * run stopped halfway is finished by running it again (rows it sealed count as sealed).
 */
@Injectable()
export class PersonalDataRedactor {
  private readonly logger = new Logger(PersonalDataRedactor.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly personal: PersonalData,
    private readonly erasure: SubjectErasure,
    private readonly router: LiveRouter,
    private readonly archiver: SegmentArchiver,
    private readonly archived: ArchivedSegments,
  ) {}

  /**
   * Runs a redaction to the end, then its verification scan. `NoPersonalDataRuleError` for a
   * type without a rule, `RedactionRunningError` when another run holds the lock.
   */
  async run(options: RedactOptions = {}): Promise<RedactResult> {
    if (this.options.role === 'replica-reader') throw new ReadOnlyReplicaError();
    const size = options.batchSize ?? DEFAULT_BATCH;
    if (!Number.isSafeInteger(size) || size < 1)
      throw new RangeError(`batchSize must be a positive integer, got ${size}`);
    // A rule set over REST on another process is in the table, not yet in this one's memory.
    await this.personal.loadRules();
    const rules = this.personal.allRules();
    if (options.messageType !== undefined && !rules.has(options.messageType))
      throw new NoPersonalDataRuleError(options.messageType);
    const types = options.messageType === undefined ? [...rules.keys()] : [options.messageType];
    return whileSessionLocked(
      this.dataSource,
      LOCKS.redact,
      () => new RedactionRunningError(),
      () => this.runLocked(types, size),
    );
  }

  private async runLocked(types: string[], size: number): Promise<RedactResult> {
    const [{ through: head }] = await execute<{ through: string }>(
      this.dataSource.manager,
      readMaxIndex(),
    );
    const through = toPosition(head);
    const result: RedactResult = {
      messageTypes: types,
      through,
      batches: 0,
      scanned: 0,
      rewritten: 0,
      rewrittenErased: 0,
      alreadySealed: 0,
      withoutPersonalFields: 0,
      unredactable: 0,
      unredactableRows: [],
      verification: { clearRows: 0, clearIndices: [], verified: true },
    };
    if (types.length > 0)
      for (let position = 0; position < through; position += size) {
        const rewrittenBefore = result.rewritten;
        const erased = await this.dataSource.transaction((manager) =>
          this.batch(manager, position, Math.min(size, through - position), types, result),
        );
        result.batches++;
        // Pages kept for catch-up hold these rows as they were: later reads get them sealed.
        if (result.rewritten > rewrittenBefore) this.router.forgetKeptReads();
        // Snapshots of an erased subject's streams hold its data; the erasure could not find
        // the streams of rows that named no subject then. It can now.
        if (erased.length > 0) await this.erasure.purgeDerived(erased);
      }
    if (types.length > 0) await this.redactArchived(types, result);
    const rules = this.personal.allRules();
    const scan = findClearRows(
      types.map((messageType) => ({ messageType, fields: rules.get(messageType)!.fields })),
      through,
      LISTED,
    );
    // The archived segments' rows first (they are the oldest), then the table's.
    const clear: { index: string; total: string }[][] = [];
    if (types.length > 0) {
      for (const segment of await this.archived.list())
        for (const chunk of segment.manifest.chunks) {
          if (chunk.rows === 0) continue;
          const held = await this.archived.rows(segment, chunk);
          clear.push(
            await execute(
              this.dataSource.manager,
              readFrom(scan, archivedSource(segment.first, segment.manifest.sha256, held.elements)),
            ),
          );
        }
      clear.push(await execute(this.dataSource.manager, scan));
    }
    const clearRows = clear.reduce(
      (sum, rows) => sum + (rows.length === 0 ? 0 : toPosition(rows[0].total)),
      0,
    );
    result.verification = {
      clearRows,
      clearIndices: clear
        .flat()
        .slice(0, LISTED)
        .map((r) => toPosition(r.index)),
      verified: clearRows === 0,
    };
    this.logger.log(
      `Redaction of ${types.join(', ') || 'no type'} up to index ${through}: ${result.scanned} rows scanned, ${result.rewritten} rewritten (${result.rewrittenErased} of erased subjects), ${result.alreadySealed} already sealed, ${result.unredactable} unredactable; ${clearRows} rows still in clear`,
    );
    return result;
  }

  /**
   * The archived segments' rows (docs/storage.md): each chunk is read, its rows of the types
   * sealed as a batch seals the table's, and written again (`SegmentArchiver.rewriteArchived`),
   * so no value in clear stays in the archive store.
   */
  private async redactArchived(types: string[], result: RedactResult): Promise<void> {
    const row = await this.archiver.rowText({
      body: 'r.body::jsonb',
      personal: 'r.personal::jsonb',
      content_hash: 'r.content_hash',
    });
    const erased = new Set<string>();
    const rewritten = await this.archiver.rewriteArchived(
      () => true,
      async (held, segment) => {
        const source = archivedSource(
          segment.first,
          segment.manifest.sha256,
          rowElements(held.rows),
        );
        const first = held.indices[0];
        const span = held.indices[held.indices.length - 1] - first + 1;
        const rows = await execute<RedactRow>(
          this.dataSource.manager,
          readFrom(readRedactBatch(first - 1, span, types, false), source),
        );
        const { rewrites, subjects } = await this.seal(rows, types, result);
        subjects.forEach((subject) => erased.add(subject));
        if (rewrites.length === 0) return new Map();
        const update = rewriteRows(rewrites);
        const texts = await execute<{ index: string; text: string }>(this.dataSource.manager, {
          text: `SELECT x.index::text AS index, ${row} AS text
                 FROM unnest($5::${TABLES.messages}[]) x
                 JOIN unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS r(index, body, personal, content_hash)
                   ON r.index = x.index`,
          values: [...update.values, held.rows],
        });
        return new Map(texts.map((t) => [toPosition(t.index), t.text]));
      },
      'the redaction',
    );
    result.rewritten += rewritten;
    if (rewritten > 0) this.router.forgetKeptReads();
    if (erased.size > 0) await this.erasure.purgeDerived([...erased]);
  }

  /**
   * One batch in one transaction: reads its rows locked, seals them, writes the changed ones.
   * Returns the erased subjects whose rows it sealed.
   */
  private async batch(
    manager: DataSource['manager'],
    position: number,
    size: number,
    types: string[],
    result: RedactResult,
  ): Promise<string[]> {
    const rows = await execute<RedactRow>(manager, readRedactBatch(position, size, types));
    const { rewrites, subjects } = await this.seal(rows, types, result);
    if (rewrites.length === 0) return [];
    const written = await execute<{ index: string }>(manager, rewriteRows(rewrites));
    result.rewritten += written.length;
    return subjects;
  }

  /** Seals rows of the types as a rule would have on append, counting the outcomes in `result`. */
  private async seal(
    rows: RedactRow[],
    types: string[],
    result: RedactResult,
  ): Promise<{ rewrites: Parameters<typeof rewriteRows>[0]; subjects: string[] }> {
    if (rows.length === 0) return { rewrites: [], subjects: [] };
    result.scanned += rows.length;
    const rewrites: Parameters<typeof rewriteRows>[0] = [];
    const erased = new Set<string>();
    for (const type of types) {
      const ofType = rows.filter((r) => r.message_type === type);
      if (ofType.length === 0) continue;
      const seals = await this.personal.sealStored(type, ofType);
      seals.forEach((seal, i) => {
        const index = toPosition(ofType[i].index);
        if (seal.outcome === 'sealed') result.alreadySealed++;
        else if (seal.outcome === 'nothing') result.withoutPersonalFields++;
        else if (seal.outcome === 'unredactable') {
          result.unredactable++;
          if (result.unredactableRows.length < LISTED)
            result.unredactableRows.push({ index, reason: seal.reason });
          this.logger.warn(`Redaction: message ${index} stays in clear: ${seal.reason}`);
        } else {
          if (seal.erased) {
            result.rewrittenErased++;
            erased.add(seal.personal.subject);
          }
          rewrites.push({ index, ...seal });
        }
      });
    }
    return { rewrites, subjects: [...erased] };
  }
}
