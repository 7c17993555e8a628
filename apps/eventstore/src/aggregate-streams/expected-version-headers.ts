import { BadRequestException } from '@nestjs/common';
import type { ExpectedVersion } from '@ordinal/log';
import { singleParam } from '../events/query-params.js';
import { parameterError } from '../errors/parameter-errors.js';

/** `"n"` (an entity tag holding a version), the form `If-Match` takes. */
const VERSION_TAG = /^(?:W\/)?"(\d{1,16})"$/;

/**
 * The expected version an append (or a delete) asks for, from the body's `expectedVersion`
 * (or `?expectedVersion=`) and the conditional headers (docs/aggregates.md): `If-Match: "n"`
 * is exactly n, `If-Match: *` is `stream_exists`, `If-None-Match: *` is `no_stream`. Two that
 * disagree, or a malformed header, are 400. Undefined when none is given.
 */
export function expectedVersionOf(
  headers: Record<string, string | string[] | undefined>,
  given: ExpectedVersion | undefined,
): ExpectedVersion | undefined {
  const ifMatch = singleParam('If-Match', headers['if-match'])?.trim();
  const ifNoneMatch = singleParam('If-None-Match', headers['if-none-match'])?.trim();
  const fromHeaders: ExpectedVersion[] = [];
  if (ifMatch !== undefined && ifMatch !== '') {
    if (ifMatch === '*') fromHeaders.push('stream_exists');
    else {
      const tag = VERSION_TAG.exec(ifMatch);
      const version = tag ? Number(tag[1]) : NaN;
      if (!Number.isSafeInteger(version))
        throw new BadRequestException(
          `If-Match must be * or a version in quotes ("3"), got '${ifMatch.slice(0, 40)}'`,
        );
      fromHeaders.push(version);
    }
  }
  if (ifNoneMatch !== undefined && ifNoneMatch !== '') {
    if (ifNoneMatch !== '*')
      throw new BadRequestException(
        `If-None-Match must be * (the stream must not exist), got '${ifNoneMatch.slice(0, 40)}'`,
      );
    fromHeaders.push('no_stream');
  }
  const all = given === undefined ? fromHeaders : [given, ...fromHeaders];
  const same = (a: ExpectedVersion, b: ExpectedVersion) =>
    a === b || ((a === 0 || a === 'no_stream') && (b === 0 || b === 'no_stream'));
  if (all.some((v) => !same(v, all[0])))
    throw new BadRequestException(
      `The expected versions disagree (${all.map(String).join(', ')}): send one, in the body or a header`,
    );
  return all[0];
}

/** `?expectedVersion=` of a delete or a metadata write: an integer >= 0, or undefined. */
export function expectedVersionQuery(name: string, value: unknown): number | undefined {
  const raw = singleParam(name, value);
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw parameterError(name, `${name} must be an integer >= 0, got '${raw.slice(0, 40)}'`);
  return Number(raw);
}
