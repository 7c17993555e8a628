import type { ExpectedVersion } from '@ordinal/log';
import { InvalidVersionError } from '../errors/index.js';

/** Throws unless `value` is a stream version: a safe integer >= 1. */
export function assertVersion(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidVersionError(`${name} must be an integer >= 1, got ${value}`);
}

/** Throws unless `value` is an expected version: an integer >= 0, `'any'`, `'no_stream'` or `'stream_exists'`. */
export function assertExpectedVersion(value: ExpectedVersion): void {
  if (value === 'any' || value === 'no_stream' || value === 'stream_exists') return;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidVersionError(
      `expectedVersion must be an integer >= 0, 'any', 'no_stream' or 'stream_exists', got ${String(value)}`,
    );
  }
}
