import { MESSAGE_TYPE_PATTERN } from '../ingest/dto/publish-message.dto.js';
import { isStorableText, MAX_POSITION } from '@ordinal/pg';
import { parameterError } from '../errors/parameter-errors.js';

/**
 * A query parameter or header given at most once, as text. Fastify gives a repeated one
 * (`?types=A&types=B`) as an array: a 400 `repeated_parameter` that says to send it once (or
 * join the values). Every other 400 of these helpers is `invalid_parameter`; each names the
 * parameter (`parameter` in the body).
 */
export function singleParam(name: string, raw: unknown): string | undefined {
  if (raw === undefined || typeof raw === 'string') return raw;
  if (Array.isArray(raw))
    throw parameterError(
      name,
      `${name} is given ${raw.length} times; send it once`,
      'repeated_parameter',
    );
  throw parameterError(name, `${name} must be text`);
}

/** A non-negative integer query parameter, or the fallback when absent; 400 otherwise. */
export function intParam(
  name: string,
  value: unknown,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = singleParam(name, value);
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw)) throw parameterError(name, `${name} must be an integer, got '${raw}'`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw parameterError(name, `${name} must be between ${min} and ${max}, got ${raw}`);
  return n;
}

/** One past the last index the log gives (2^53, exact as a double): where a reader of a full log waits. */
const AFTER_LAST = MAX_POSITION + 1;

/**
 * A first index to read (`startIndex`, `fromIndex`): as `intParam`, and also 2^53, one past
 * the last index the log gives, so a reader that has everything of a full log (a page's
 * `nextIndex`, a bookmark + 1) continues there and waits. Compared on the text: 2^53 + 1
 * would read as 2^53.
 */
export function startParam(name: string, value: unknown, fallback: number, min = 0): number {
  const raw = singleParam(name, value);
  if (raw === String(AFTER_LAST)) return AFTER_LAST;
  return intParam(name, raw, fallback, min);
}

/** `types=A,B` as a list (empty = all types); 400 for a name outside [A-Za-z0-9._:-]. */
export function typesParam(value: unknown): string[] {
  const raw = singleParam('types', value);
  if (raw === undefined || raw === '') return [];
  const types = raw
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  for (const t of types) {
    // A leading `$` names a system type (`$stream-deleted`, docs/lifecycle.md).
    if (t.length > 200 || !MESSAGE_TYPE_PATTERN.test(t.startsWith('$') ? t.slice(1) : t))
      throw parameterError(
        'types',
        `types: '${t}' is not a message type (1-200 characters of [A-Za-z0-9._:-])`,
      );
  }
  return types;
}

/** `correlationId=…`: 1-200 characters of storable text, or undefined when absent; 400 otherwise. */
export function correlationParam(value: unknown): string | undefined {
  const raw = singleParam('correlationId', value);
  if (raw === undefined) return undefined;
  if (raw.length === 0 || raw.length > 200 || !isStorableText(raw))
    throw parameterError(
      'correlationId',
      `correlationId must be 1-200 characters of text, got ${raw.length} characters`,
    );
  return raw;
}

/** `tombstones=include|skip` (docs/lifecycle.md); 400 otherwise. @default 'include' */
export function tombstonesParam(value: unknown): 'include' | 'skip' {
  const raw = singleParam('tombstones', value);
  if (raw === undefined || raw === '' || raw === 'include') return 'include';
  if (raw === 'skip') return 'skip';
  throw parameterError(
    'tombstones',
    `tombstones must be include or skip, got '${raw.slice(0, 40)}'`,
  );
}

/**
 * `tiers`: `all` (the default) reads archived segments from the archive store; `hot` answers
 * 409 `index_archived` where a read reaches one instead (docs/storage.md).
 */
export function tiersParam(value: unknown): 'all' | 'hot' {
  const raw = singleParam('tiers', value);
  if (raw === undefined || raw === '' || raw === 'all') return 'all';
  if (raw === 'hot') return 'hot';
  throw parameterError('tiers', `tiers must be all or hot, got '${raw.slice(0, 40)}'`);
}
