/**
 * The highest position the log gives (2^53 − 1, `Number.MAX_SAFE_INTEGER`): the last index
 * every JSON reader reads exactly. Writers refuse an append that would pass it (the log is
 * full), so no stored position is ever beyond what `toPosition` converts.
 */
export const MAX_POSITION = Number.MAX_SAFE_INTEGER;

/**
 * pg returns int8 as a string. Every position goes through here: numbers while exact
 * (up to `MAX_POSITION`), an error otherwise, never ad hoc.
 */
export function toPosition(value: string | number | null | undefined): number {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`Position ${value} is not exact as a number`);
  return n;
}
