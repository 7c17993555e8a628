import { atPositions } from './at-positions.sql.js';

describe('atPositions', () => {
  it('reads neighbours as their range with the list as a filter, bounded by the positions in range', () => {
    const at = atPositions([5, 7, 6, 20, 9], 6, 10);
    expect(at?.where).toContain('index + 0 = ANY($1::bigint[])');
    expect(at?.values).toEqual([[7, 6, 9], 6, 9]);
  });

  it('looks sparse positions up by their list, and answers null when none is in range', () => {
    expect(atPositions([1, 5_000])?.where).toContain('AND index = ANY($1::bigint[])');
    expect(atPositions([1, 2], 3, 9)).toBeNull();
  });
});
