import { UsageError } from '../cli-error.js';

/** An index or count flag: an integer >= `min`. */
export function index(flag: string, raw: string, min = 0): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min)
    throw new UsageError(`${flag} must be an integer >= ${min}, got '${raw}'`);
  return n;
}

/** A JSON argument, parsed, or a usage error naming it. */
export function json(what: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new UsageError(
      `${what} is not valid JSON (${(error as Error).message}): ${raw.length > 80 ? raw.slice(0, 80) + '…' : raw}`,
    );
  }
}
