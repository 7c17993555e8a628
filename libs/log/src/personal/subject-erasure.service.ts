import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execute } from '@ordinal/pg';
import { LogWriter } from '../writer/log-writer.service.js';
import { SUBJECT_ERASED_TYPE, SYSTEM_USER } from '../log.constants.js';
import { PersonalData } from './personal-data.service.js';
import { subjectHash } from './personal-crypto.js';
import { isTenantId } from '../tenant.js';
import { InvalidTenantError } from '../errors/index.js';
import {
  readErasedSubjects,
  readErasure,
  recordErasure,
  type ErasureRow,
} from './sql/personal-data.sql.js';

/** What an erasure answers. */
export interface ErasureResult {
  /** SHA-256 (hex) of the subject id: what the ledger keeps. */
  subjectHash: string;
  erasedAt: string;
  reason: string;
  /** Index of the `$subject-erased` marker. */
  markerIndex: number | null;
  /** True when the subject had been erased before (nothing was done again). */
  alreadyErased: boolean;
}

/** Called after a subject is erased (its id hash): purges what was derived from its data. */
export type ErasureListener = (subjectHash: string) => Promise<void>;

/** The body of a `$subject-erased` marker. */
export interface SubjectErasedBody {
  subject: string;
}

const toResult = (row: ErasureRow, alreadyErased: boolean): ErasureResult => ({
  subjectHash: row.subject_hash,
  erasedAt: new Date(row.erased_at).toISOString(),
  reason: row.reason,
  markerIndex: row.marker_index === null ? null : Number(row.marker_index),
  alreadyErased,
});

/**
 * Erasure of a subject's personal data by crypto-shredding (docs/personal-data.md): destroys
 * its data key (every sealed field of it, in the log and in every backup of the log, reads as
 * its replacement from then on), appends a `$subject-erased {subject}` marker so consumers can
 * purge what they derived, and records it in the erasure ledger, which every start reapplies.
 * Indices, versions and stream heads do not change; erasing twice is a no-op.
 */
@Injectable()
export class SubjectErasure {
  private readonly logger = new Logger(SubjectErasure.name);
  private readonly listeners = new Set<ErasureListener>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly personal: PersonalData,
    private readonly writer: LogWriter,
  ) {}

  /**
   * Erases the personal data of `subjectId` (the value its messages hold at the rule's subject);
   * with `tenant`, of that tenant's subject of that id (docs/tenants.md: each tenant's subjects
   * are its own), whose marker is then the tenant's.
   */
  async erase(
    subjectId: string,
    reason = '',
    options: { tenant?: string } = {},
  ): Promise<ErasureResult> {
    const { tenant } = options;
    if (tenant !== undefined && !isTenantId(tenant)) throw new InvalidTenantError(tenant);
    const hash = subjectHash(subjectId, tenant);
    const [known] = await execute<ErasureRow>(this.dataSource.manager, readErasure(hash));
    if (known) return toResult(known, true);
    // The key first: once it is gone no reader anywhere gets the clear values, whatever follows.
    await this.personal.destroy([hash]);
    const { entries } = await this.writer.append({
      messages: [
        {
          messageType: SUBJECT_ERASED_TYPE,
          userId: SYSTEM_USER,
          body: { subject: subjectId } satisfies SubjectErasedBody,
        },
      ],
      skipDuplicateWindow: true,
      ...(tenant === undefined ? {} : { tenant }),
    });
    const entry = entries[0];
    const markerIndex = entry.status === 'duplicate' ? null : entry.message.id;
    await execute(this.dataSource.manager, recordErasure(hash, reason, markerIndex ?? 0));
    for (const listener of this.listeners) await listener(hash);
    const [row] = await execute<ErasureRow>(this.dataSource.manager, readErasure(hash));
    this.logger.log(`Subject ${hash.slice(0, 12)}… erased (marker at index ${markerIndex})`);
    return toResult(row, false);
  }

  /**
   * Destroys again every key the ledger names (after a restore of the key store from a backup
   * older than an erasure, say), and every key of a deleted tenant's subjects. Returns how many
   * subjects the ledger holds and how many tenants were deleted.
   */
  async reapply(): Promise<{ subjects: number; tenants: number }> {
    const subjects = await this.erasedSubjects();
    if (subjects.length > 0) await this.personal.destroy(subjects);
    // And every deleted tenant's keys (docs/tenants.md#deleting-a-tenant).
    const { tenants } = await this.personal.reapplyDeletedTenants();
    return { subjects: subjects.length, tenants };
  }

  /** The hashes of every erased subject. */
  async erasedSubjects(): Promise<string[]> {
    const rows = await execute<{ subject_hash: string }>(
      this.dataSource.manager,
      readErasedSubjects(),
    );
    return rows.map((r) => r.subject_hash);
  }

  /**
   * Calls the erasure listeners again for subjects erased before some of their rows were
   * sealed (a redaction of legacy rows): what was derived from those rows (their streams'
   * snapshots) is found only now that the rows name their subject.
   */
  async purgeDerived(subjects: string[]): Promise<void> {
    for (const subject of subjects) for (const listener of this.listeners) await listener(subject);
  }

  /** Calls `listener` after every erasure (snapshots, read models); returns the unsubscriber. */
  onErased(listener: ErasureListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
