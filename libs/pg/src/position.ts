/**
 * pg returns int8 as a string. Every position goes through here: numbers while exact
 * (below 2^53), an error otherwise, never ad hoc.
 */
export function toPosition(value: string | number | null | undefined): number {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`Position ${value} is not exact as a number`);
  return n;
}
