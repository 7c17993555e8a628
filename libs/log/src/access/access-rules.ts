import { categoryOf } from '../message.js';
import {
  ACCESS_ACTIONS,
  AccessRuleError,
  type AccessAction,
  type AccessPrincipal,
  type AccessRule,
  type AccessSubject,
} from './access-rule.js';

/** A glob (`*`, `?`) as an anchored RegExp; everything else literal. */
export function globRegExp(glob: string): RegExp {
  const body = glob
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 's');
}

/** A pattern that names a whole category: `invoice-*`, `invoice` or `*` (no other wildcard, no inner `-`). */
const CATEGORY_FORM = /^(?:\*|[^*?-]+(?:-\*)?)$/;

/** Decisions remembered per category, per message type, at most this many in all. */
const MEMO_LIMIT = 10_000;

interface CompiledRule {
  principal: RegExp;
  principalKind: 'token' | 'jwt' | 'group' | '*';
  allow: ReadonlySet<AccessAction>;
  categories: RegExp[] | null;
  categoryGlobs: string[] | null;
  types: RegExp[] | null;
}

/** A predicate over messages: may this principal do this with it. */
export type AccessCheck = (message: AccessSubject) => boolean;

const matchesAny = (patterns: RegExp[], value: string) => patterns.some((p) => p.test(value));

/**
 * The configured access rules, compiled once. With no rules everything is allowed (scopes
 * alone decide); with rules, what no rule allows is denied. A principal's applicable rules
 * are worked out once and remembered, so checking a message costs a few RegExp tests.
 */
export class AccessRules {
  private readonly rules: CompiledRule[];
  private readonly checks = new Map<string, AccessCheck | null>();

  constructor(rules: readonly AccessRule[]) {
    this.rules = rules.map((rule, i) => compileRule(rule, i));
  }

  /** True when no rule is configured: every principal may do everything its scopes allow. */
  get open(): boolean {
    return this.rules.length === 0;
  }

  /**
   * The check of `action` for `principal`, or null when it may do it with every message (no
   * rules, or a rule of its with neither categories nor types).
   */
  checkFor(principal: AccessPrincipal, action: AccessAction): AccessCheck | null {
    if (this.open) return null;
    const key = `${action}\n${principal.kind}:${principal.name}\n${principal.groups.join('\n')}`;
    if (this.checks.has(key)) return this.checks.get(key)!;
    const mine = this.rules.filter((r) => r.allow.has(action) && appliesTo(r, principal));
    let check: AccessCheck | null;
    if (mine.some((r) => r.categories === null && r.types === null)) check = null;
    else if (mine.length === 0) check = () => false;
    else {
      const decide = (streamId: string, category: string, messageType: string) =>
        mine.some(
          (r) =>
            (r.types === null || matchesAny(r.types, messageType)) &&
            (r.categories === null ||
              matchesAny(r.categories, streamId) ||
              matchesAny(r.categories, category)),
        );
      if (
        mine.every(
          (r) => r.categoryGlobs === null || r.categoryGlobs.every((g) => CATEGORY_FORM.test(g)),
        )
      ) {
        // Every pattern names whole categories: the decision depends on the category and the
        // type alone, so it is worked out once per pair (a feed checks every message it passes).
        const memo = new Map<string, Map<string, boolean>>();
        let size = 0;
        check = (message) => {
          const category = message.streamId ? categoryOf(message.streamId) : '';
          let byType = memo.get(category);
          if (byType === undefined) memo.set(category, (byType = new Map<string, boolean>()));
          let allowed = byType.get(message.messageType);
          if (allowed === undefined) {
            allowed = decide(category === '' ? '' : `${category}-`, category, message.messageType);
            if (++size > MEMO_LIMIT) {
              memo.clear();
              size = 0;
            } else byType.set(message.messageType, allowed);
          }
          return allowed;
        };
      } else
        check = (message) =>
          decide(
            message.streamId ?? '',
            message.streamId ? categoryOf(message.streamId) : '',
            message.messageType,
          );
    }
    if (this.checks.size >= 4096) this.checks.clear();
    this.checks.set(key, check);
    return check;
  }

  /** May `principal` do `action` with this message. */
  allows(principal: AccessPrincipal, action: AccessAction, message: AccessSubject): boolean {
    const check = this.checkFor(principal, action);
    return check === null || check(message);
  }

  /** May `principal` do `action` with some messages of `category` (of some type). */
  coversSome(principal: AccessPrincipal, action: AccessAction, category: string): boolean {
    if (this.open) return true;
    return this.rules.some(
      (r) =>
        r.allow.has(action) &&
        appliesTo(r, principal) &&
        (r.categories === null ||
          matchesAny(r.categories, category) ||
          r.categoryGlobs!.includes(`${category}-*`)),
    );
  }

  /**
   * May `principal` do `action` with every message of `category` (null: of the whole log),
   * of any type or only of `types`: for consumer groups and other readers of a whole source.
   */
  coversSource(
    principal: AccessPrincipal,
    action: AccessAction,
    source: { category?: string | null; types?: readonly string[] },
  ): boolean {
    if (this.open) return true;
    const mine = this.rules.filter((r) => r.allow.has(action) && appliesTo(r, principal));
    const coversCategory = (r: CompiledRule) =>
      r.categories === null ||
      r.categoryGlobs!.includes('*') ||
      (source.category != null &&
        (matchesAny(r.categories, source.category) ||
          r.categoryGlobs!.includes(`${source.category}-*`)));
    const coversTypes = (r: CompiledRule) =>
      r.types === null ||
      (source.types !== undefined && source.types.every((t) => matchesAny(r.types!, t)));
    return mine.some((r) => coversCategory(r) && coversTypes(r));
  }

  /**
   * The categories `coversSource(principal, action, {category})` is true of, as SQL LIKE
   * patterns over the category, or null for every category: so a list of streams can leave
   * the others out where it is read, and a page of it ends on a stream the principal may see.
   */
  categoryPatterns(principal: AccessPrincipal, action: AccessAction): string[] | null {
    if (this.open) return null;
    // Only a rule without types covers a whole category (coversSource with no types).
    const mine = this.rules.filter(
      (r) => r.allow.has(action) && appliesTo(r, principal) && r.types === null,
    );
    if (mine.some((r) => r.categories === null || r.categoryGlobs!.includes('*'))) return null;
    const patterns = new Set<string>();
    for (const r of mine)
      for (const glob of r.categoryGlobs!) {
        patterns.add(globLike(glob));
        if (glob.endsWith('-*')) patterns.add(escapeLike(glob.slice(0, -2)));
      }
    return [...patterns];
  }
}

/** A literal for SQL LIKE (the default escape `\\`). */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, '\\$&');

/** A glob (`*`, `?`) as a SQL LIKE pattern matching exactly what `globRegExp` matches. */
export function globLike(glob: string): string {
  return glob
    .split('')
    .map((c) => (c === '*' ? '%' : c === '?' ? '_' : escapeLike(c)))
    .join('');
}

function appliesTo(rule: CompiledRule, principal: AccessPrincipal): boolean {
  switch (rule.principalKind) {
    case '*':
      return true;
    case 'group':
      return principal.groups.some((g) => rule.principal.test(g));
    default:
      return rule.principalKind === principal.kind && rule.principal.test(principal.name);
  }
}

function compileRule(rule: AccessRule, i: number): CompiledRule {
  const where = `rules[${i}]`;
  if (!rule || typeof rule !== 'object') throw new AccessRuleError(`${where} must be an object`);
  const principal = rule.principal;
  if (typeof principal !== 'string' || principal === '')
    throw new AccessRuleError(
      `${where}.principal must be token:<name>, jwt:<subject>, group:<name> or *`,
    );
  let principalKind: CompiledRule['principalKind'];
  let pattern: string;
  if (principal === '*') {
    principalKind = '*';
    pattern = '*';
  } else {
    const colon = principal.indexOf(':');
    const kind = principal.slice(0, colon);
    pattern = principal.slice(colon + 1);
    if (colon < 1 || !['token', 'jwt', 'group'].includes(kind) || pattern === '')
      throw new AccessRuleError(
        `${where}.principal '${principal}' must be token:<name>, jwt:<subject>, group:<name> or *`,
      );
    principalKind = kind as CompiledRule['principalKind'];
  }
  if (
    !Array.isArray(rule.allow) ||
    rule.allow.length === 0 ||
    rule.allow.some((a) => !ACCESS_ACTIONS.includes(a))
  )
    throw new AccessRuleError(`${where}.allow must list read and/or write`);
  const globs = (field: 'categories' | 'types'): string[] | null => {
    const value = rule[field];
    if (value === undefined) return null;
    if (
      !Array.isArray(value) ||
      value.length === 0 ||
      value.some((v) => typeof v !== 'string' || v === '')
    )
      throw new AccessRuleError(
        `${where}.${field} must be a non-empty list of patterns (leave it out for all)`,
      );
    return value;
  };
  const categoryGlobs = globs('categories');
  const typeGlobs = globs('types');
  return {
    principal: globRegExp(pattern),
    principalKind,
    allow: new Set(rule.allow),
    categories: categoryGlobs && categoryGlobs.map(globRegExp),
    categoryGlobs,
    types: typeGlobs && typeGlobs.map(globRegExp),
  };
}
