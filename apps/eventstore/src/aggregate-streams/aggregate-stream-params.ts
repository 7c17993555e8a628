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
