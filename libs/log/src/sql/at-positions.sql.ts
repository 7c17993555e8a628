/**
 * Positions spread over at most this many indices per position are read as one range with the
 * list as a filter; sparser ones by the list.
 */
const DENSE_SPREAD = 4;

/**
 * The `WHERE` condition of a read of the rows at `positions` (within `[from, to]` when given),
 * on a query whose values start with the ones returned: `$1` the list, `$2` and `$3` its lowest
 * and highest position. Positions are almost always neighbours (a consumer group's claimed
 * batch, a keyed read's kept rows): they are read as their range, one index scan, with the list
 * as a filter (`index + 0` keeps it out of the index condition). Looked up by the list instead,
 * PostgreSQL 15 descends the primary key once per position, in every segment the range does not
 * prune: about 3 times the buffers and 3-4 times the CPU for 500 neighbours
 * (docs/performance.md, "Consumer groups"). A sparse list is looked up by itself, in its range.
 * `null` when none is in range.
 */
export function atPositions(
  positions: readonly number[],
  from = -Infinity,
  to = Infinity,
): { where: string; values: [number[], number, number] } | null {
  const within = positions.filter((p) => p >= from && p <= to);
  if (within.length === 0) return null;
  let low = within[0];
  let high = within[0];
  for (const p of within) {
    if (p < low) low = p;
    if (p > high) high = p;
  }
  const column = high - low + 1 <= DENSE_SPREAD * within.length ? 'index + 0' : 'index';
  return {
    where: `index >= $2::bigint AND index <= $3::bigint AND ${column} = ANY($1::bigint[])`,
    values: [within, low, high],
  };
}
