import { Inject, Injectable, Logger } from '@nestjs/common';
import { categoryOf, LogWriter, type AccessSubject } from '@ordinal/log';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { AUDIT_CATEGORY } from '../access/audit-category.js';
import { principalLabel, type Principal } from '../auth/principal.js';

/** The message type of each kind of audit record. */
export const AUDIT_TYPES = {
  admin: '$audit.admin',
  denied: '$audit.denied',
  read: '$audit.read',
} as const;
export type AuditKind = keyof typeof AUDIT_TYPES;

/** One audit record: who, what, when, from where (the body of a `$audit.*` message). */
export interface AuditEntry {
  kind: AuditKind;
  /** `token:<name>` / `jwt:<subject>`, or null when the request had no valid identity. */
  who: string | null;
  /** `METHOD /route/pattern` and the URL as sent (its query's `ticket` removed). */
  what: { method: string; route: string; url: string };
  status: number;
  code?: string;
  reason?: string;
  /**
   * The tenant the request acted for (docs/tenants.md), or, for a 403 `tenant_forbidden`, the one
   * it asked for. The trail itself is no tenant's: only the admin scope of no tenant reads it.
   */
  tenant?: string;
  /** Audited reads: the audited categories read. */
  categories?: string[];
  from: { ip: string; userAgent?: string };
  at: string;
}

/** A request the trail has noted audited reads on. */
export interface AuditedRequest {
  auditedReads?: Set<string>;
}

/**
 * The audit trail (ORDINAL_AUDIT=on): records appended to the log itself, in the reserved
 * streams `$audit-<day>` (category `$audit`), which only the admin scope reads and the API
 * never writes. Appends are not awaited by the request they describe; a failed one is logged.
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger(AuditTrail.name);
  readonly enabled: boolean;
  private readonly audited: ReadonlySet<string>;

  constructor(
    @Inject(ORDINAL_CONFIG) config: OrdinalConfig,
    private readonly writer: LogWriter,
  ) {
    this.enabled = config.access.audit && config.role === 'primary';
    this.audited = new Set(config.access.auditedCategories);
  }

  /** The audited categories of the messages read, noted on the request for its audit record. */
  noteRead(request: AuditedRequest, messages: Iterable<AccessSubject>): void {
    if (!this.enabled || this.audited.size === 0) return;
    for (const message of messages) {
      const category = message.streamId ? categoryOf(message.streamId) : null;
      if (category !== null && this.audited.has(category))
        (request.auditedReads ??= new Set()).add(category);
    }
  }

  /**
   * The audited categories a stream opened by `principal` may deliver, noted on the request
   * (a stream is recorded as it opens, not message by message).
   */
  noteStream(request: AuditedRequest, mayRead: (category: string) => boolean): void {
    if (!this.enabled) return;
    for (const category of this.audited)
      if (mayRead(category)) (request.auditedReads ??= new Set()).add(category);
  }

  /** Appends one record; never throws (a failure is logged). */
  record(entry: AuditEntry): void {
    if (!this.enabled) return;
    const day = entry.at.slice(0, 10);
    this.writer
      .append({
        messages: [{ messageType: AUDIT_TYPES[entry.kind], userId: entry.who, body: entry }],
        stream: { streamId: `${AUDIT_CATEGORY}-${day}`, expectedVersion: 'any' },
        skipDuplicateWindow: true,
        correlation: null,
      })
      .catch((error: unknown) =>
        this.logger.error(
          `Audit record not stored (${entry.kind} ${entry.what.method} ${entry.what.route} by ${entry.who ?? 'anonymous'}): ${String(error)}`,
        ),
      );
  }

  /** The `who` of a principal. */
  static who(principal: Principal | undefined): string | null {
    return principal ? principalLabel(principal) : null;
  }
}
