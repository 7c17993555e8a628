import type { BadRequestException } from '@nestjs/common';
import { isReadableStreamId, isValidStreamId } from '@ordinal/event-sourcing';
import { singleParam } from '../events/query-params.js';
import { parameterError } from '../errors/parameter-errors.js';

/** 400 `invalid_stream_id` naming the parameter and the allowed shape. */
function invalidStreamId(raw: unknown, name = 'streamId'): BadRequestException {
  return parameterError(
    name,
    `${name} '${String(raw).slice(0, 80)}' is invalid: use 1-200 characters of [A-Za-z0-9._:@-], starting with a letter or digit`,
    'invalid_stream_id',
  );
}

/** The `:streamId` path parameter of a write, or 400 `invalid_stream_id`. */
export function streamIdParam(raw: string): string {
  if (!isValidStreamId(raw)) throw invalidStreamId(raw);
  return raw;
}

/**
 * The `:streamId` path parameter of a read, or 400 `invalid_stream_id`: a stream id, or a
 * system stream's (`$audit-<day>`, which the access policy lets only admins read).
 */
export function readableStreamIdParam(raw: string): string {
  if (!isReadableStreamId(raw)) throw invalidStreamId(raw);
  return raw;
}

/** A `true`/`false` query parameter, or the fallback when absent; 400 otherwise. */
export function booleanParam(name: string, value: unknown, fallback: boolean): boolean {
  const raw = singleParam(name, value);
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw parameterError(name, `${name} must be true or false, got '${raw}'`);
}

/** A tenant's qualifier, `<tenant>/` (docs/tenants.md), at the start of a stored stream id. */
const QUALIFIER = /^([A-Za-z0-9][A-Za-z0-9_.]{0,62})\//;

/**
 * The document's patterns of `GET /api/streams`'s `prefix` and `after`: a stream id's
 * characters, and for a principal of no tenant an optional tenant's qualifier before them.
 */
export const QUALIFIED_PREFIX_PATTERN =
  '^([A-Za-z0-9][A-Za-z0-9_.]{0,62}/)?[A-Za-z0-9._:@-]{0,200}$';
export const QUALIFIED_AFTER_PATTERN =
  '^([A-Za-z0-9][A-Za-z0-9_.]{0,62}/)?[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$';

/** `raw` split into a tenant's qualifier (`acme/`, or '') and the rest, when `qualified` allows one. */
function qualifierOf(raw: string, qualified: boolean): [string, string] {
  const match = qualified ? QUALIFIER.exec(raw) : null;
  return match ? [match[0], raw.slice(match[0].length)] : ['', raw];
}

/**
 * A `prefix` query parameter of stream ids (1-200 stream id characters), or undefined when
 * absent; 400 otherwise. `qualified` (a principal of no tenant, which lists every tenant's
 * streams): it may start with a tenant's qualifier, `acme/`.
 */
export function streamPrefixParam(value: unknown, qualified = false): string | undefined {
  const raw = singleParam('prefix', value);
  if (raw === undefined || raw === '') return undefined;
  const [qualifier, rest] = qualifierOf(raw, qualified);
  if (!(qualifier !== '' && rest === '') && !/^[A-Za-z0-9._:@-]{1,200}$/.test(rest))
    throw parameterError(
      'prefix',
      `prefix '${raw.slice(0, 80)}' is invalid: use 1-200 characters of [A-Za-z0-9._:@-]`,
    );
  return raw;
}

/**
 * An `after` query parameter (a stream id), or undefined when absent; 400 otherwise.
 * `qualified`: it may be a tenant's stream, `acme/order-1`.
 */
export function afterStreamParam(value: unknown, qualified = false): string | undefined {
  const raw = singleParam('after', value);
  if (raw === undefined || raw === '') return undefined;
  // Whatever a list can end on, the audit trail's streams included.
  if (!isReadableStreamId(qualifierOf(raw, qualified)[1])) throw invalidStreamId(raw, 'after');
  return raw;
}
