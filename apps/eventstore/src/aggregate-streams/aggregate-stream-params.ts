import { BadRequestException } from '@nestjs/common';
import { isValidStreamId } from '@ordinal/event-sourcing';
import { singleParam } from '../events/query-params.js';

/** The `:streamId` path parameter, or 400 naming the allowed shape. */
export function streamIdParam(raw: string): string {
  if (!isValidStreamId(raw)) {
    throw new BadRequestException(
      `streamId '${String(raw).slice(0, 80)}' is invalid: use 1-200 characters of [A-Za-z0-9._:@-], starting with a letter or digit`,
    );
  }
  return raw;
}

/** A `true`/`false` query parameter, or the fallback when absent; 400 otherwise. */
export function booleanParam(name: string, value: unknown, fallback: boolean): boolean {
  const raw = singleParam(name, value);
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new BadRequestException(`${name} must be true or false, got '${raw}'`);
}

/** A `prefix` query parameter of stream ids (1-200 stream id characters), or undefined when absent; 400 otherwise. */
export function streamPrefixParam(value: unknown): string | undefined {
  const raw = singleParam('prefix', value);
  if (raw === undefined || raw === '') return undefined;
  if (!/^[A-Za-z0-9._:@-]{1,200}$/.test(raw))
    throw new BadRequestException(
      `prefix '${raw.slice(0, 80)}' is invalid: use 1-200 characters of [A-Za-z0-9._:@-]`,
    );
  return raw;
}

/** An `after` query parameter (a stream id), or undefined when absent; 400 otherwise. */
export function afterStreamParam(value: unknown): string | undefined {
  const raw = singleParam('after', value);
  if (raw === undefined || raw === '') return undefined;
  return streamIdParam(raw);
}
