import { Inject, Injectable } from '@nestjs/common';
import {
  AccessRules,
  categoryOf,
  type AccessAction,
  type AccessCheck,
  type AccessSubject,
} from '@ordinal/log';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';
import { principalLabel, type Principal } from '../auth/principal.js';
import { AccessDeniedException } from './access-denied.exception.js';
import { AUDIT_CATEGORY } from './audit-category.js';

/** True for a message of the reserved audit category (`$audit-*`). */
export const isAuditSubject = (message: AccessSubject): boolean => {
  const streamId = message.streamId;
  // The category is the text before the first `-`: `$audit` or `$audit-…` (no slice per message).
  return (
    streamId != null &&
    streamId.startsWith(AUDIT_CATEGORY) &&
    (streamId.length === AUDIT_CATEGORY.length || streamId[AUDIT_CATEGORY.length] === '-')
  );
};

/**
 * The one place the server decides what a principal may read and write, beyond its scopes:
 * the configured access rules (ORDINAL_ACCESS_RULES), and the audit trail's category, which
 * only the admin scope reads and nobody writes through the API. Writes are checked before
 * anything is stored (a batch with one forbidden message is refused whole); readers of many
 * messages get a filter (pages, SSE feeds), readers of one thing a 403.
 */
@Injectable()
export class AccessPolicy {
  private readonly audited: boolean;

  constructor(
    @Inject(ORDINAL_CONFIG) config: OrdinalConfig,
    /** The rules, from OrdinalModule's `access` option (the server's ORDINAL_ACCESS_RULES). */
    readonly rules: AccessRules,
  ) {
    this.audited = config.access.audit;
  }

  /**
   * The filter of what `principal` may read, or null when it may read everything (no rules or
   * an unrestricted rule, and the admin scope or no audit category to hide).
   */
  readFilter(principal: Principal): AccessCheck | null {
    const check = this.rules.checkFor(principal, 'read');
    if (principal.scopes.has('admin')) return check;
    return check === null
      ? (message) => !isAuditSubject(message)
      : (message) => !isAuditSubject(message) && check(message);
  }

  /** Whether `principal` may read this message. */
  mayRead(principal: Principal, message: AccessSubject): boolean {
    const filter = this.readFilter(principal);
    return filter === null || filter(message);
  }

  /**
   * Throws 403 unless `principal` may read this message. The refusal names neither its type nor
   * its stream: a reader walking the indices must learn nothing of what it may not read.
   */
  assertRead(principal: Principal, message: AccessSubject): void {
    if (!this.mayRead(principal, message))
      throw new AccessDeniedException(
        `${principalLabel(principal)} may not read this message: no access rule allows it (docs/security.md)`,
      );
  }

  /**
   * Throws 403 naming the first message `principal` may not write; nothing is stored then.
   * Messages of the audit category are never written through the API.
   */
  assertWrite(principal: Principal, messages: readonly AccessSubject[]): void {
    const check = this.rules.checkFor(principal, 'write');
    messages.forEach((message, index) => {
      if (isAuditSubject(message) || (check !== null && !check(message)))
        throw this.denied(principal, 'write', message, messages.length > 1 ? index : undefined);
    });
  }

  /**
   * Throws 403 unless `principal` may do `action` with every message of the source: a whole
   * stream's category (stream reads, deletes, metadata), a consumer group's source.
   */
  assertSource(
    principal: Principal,
    action: AccessAction,
    source: { category?: string | null; types?: readonly string[] },
  ): void {
    if (!this.coversSource(principal, action, source))
      throw this.sourceDenied(principal, action, source);
  }

  /** Whether `principal` may do `action` with every message of the source (see `assertSource`). */
  coversSource(
    principal: Principal,
    action: AccessAction,
    source: { category?: string | null; types?: readonly string[] },
  ): boolean {
    // The audit trail: never written through the API, read with admin only (a source of the
    // whole log holds it, and a group cannot hide it from one member: admin only too).
    const holdsAudit =
      source.category === AUDIT_CATEGORY ||
      (this.audited && source.category == null && !source.types);
    if (holdsAudit && (action === 'write' || !principal.scopes.has('admin'))) return false;
    return this.rules.coversSource(principal, action, source);
  }

  /** True when every source is readable by `principal` (no rules, and no audit trail to hide from it). */
  sourcesOpenTo(principal: Principal): boolean {
    return this.rules.open && (!this.audited || principal.scopes.has('admin'));
  }

  /** Whether `principal` may read some messages of `category` (any type). */
  mayReadSome(principal: Principal, category: string): boolean {
    if (category === AUDIT_CATEGORY && !principal.scopes.has('admin')) return false;
    const check = this.rules.checkFor(principal, 'read');
    return check === null || this.rules.coversSome(principal, 'read', category);
  }

  /**
   * The streams `principal` may read whole, for a list to filter where it is read: categories
   * as LIKE patterns (null: all) and those it never sees (the audit trail's, without admin).
   * Exactly the streams `mayReadStream` is true of.
   */
  readableStreams(principal: Principal): { categories: string[] | null; except: string[] } {
    return {
      categories: this.rules.categoryPatterns(principal, 'read'),
      except: principal.scopes.has('admin') ? [] : [AUDIT_CATEGORY],
    };
  }

  /** Whether `principal` may read the whole stream (stream lists leave out those it may not). */
  mayReadStream(principal: Principal, streamId: string): boolean {
    return this.coversSource(principal, 'read', { category: categoryOf(streamId) });
  }

  /** Throws 403 unless `principal` may do `action` with the whole stream. */
  assertStream(principal: Principal, action: AccessAction, streamId: string): void {
    this.assertSource(principal, action, { category: categoryOf(streamId) });
  }

  private denied(
    principal: Principal,
    action: AccessAction,
    message: AccessSubject,
    index?: number,
  ): AccessDeniedException {
    const what = `${index !== undefined ? `messages[${index}] ` : ''}(type ${message.messageType}${message.streamId ? `, stream ${message.streamId}` : ''})`;
    return new AccessDeniedException(
      `${principalLabel(principal)} may not ${action} ${what}: no access rule allows it (docs/security.md)`,
      {
        ...(index !== undefined ? { index } : {}),
        messageType: message.messageType,
        streamId: message.streamId ?? null,
      },
    );
  }

  private sourceDenied(
    principal: Principal,
    action: AccessAction,
    source: { category?: string | null; types?: readonly string[] },
  ): AccessDeniedException {
    const what = source.category
      ? `the category ${source.category}`
      : source.types
        ? `the types ${source.types.join(', ')} in every category`
        : 'the whole log';
    return new AccessDeniedException(
      `${principalLabel(principal)} may not ${action} ${what}: no access rule allows all of it (docs/security.md)`,
    );
  }
}
