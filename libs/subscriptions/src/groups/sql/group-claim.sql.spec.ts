import { claimedDeliveries, renderClaimed, type ClaimRow } from './group-claim.sql.js';

describe('renderClaimed', () => {
  it('reads a run of neighbouring positions as one range, the list a filter outside the index condition', () => {
    const query = renderClaimed([103, 101, 102, 105]);
    expect(query.text).toMatch(
      /index >= \$2::bigint AND index <= \$3::bigint AND index \+ 0 = ANY\(\$1::bigint\[\]\)/,
    );
    expect(query.values).toEqual([[103, 101, 102, 105], 101, 105]);
    expect(query.name).toBe('ordinal-group-render-run');
  });

  it('looks a sparse batch up by its list, within its range', () => {
    const query = renderClaimed([7, 90_000]);
    expect(query.text).toMatch(/index <= \$3::bigint AND index = ANY\(\$1::bigint\[\]\)/);
    expect(query.values).toEqual([[7, 90_000], 7, 90_000]);
    expect(query.name).toBe('ordinal-group-render-list');
  });
});

describe('claimedDeliveries', () => {
  const row = (indices: string, attempts: string, late: string): ClaimRow => ({
    found: 1,
    stale: 0,
    epoch: '1',
    parked: 0,
    starved: 0,
    watching: 0,
    indices,
    attempts,
    late,
  });

  it('pairs each index with its attempt and late flag, in index order (rounds of a claim answer out of order)', () => {
    expect(claimedDeliveries(row('12,3,1000', '1,2,1', 'f,t,f'))).toEqual([
      { index: 3, attempt: 2, late: true },
      { index: 12, attempt: 1, late: false },
      { index: 1000, attempt: 1, late: false },
    ]);
  });

  it('reads an empty claim as none', () => {
    expect(claimedDeliveries(row('', '', ''))).toEqual([]);
  });
});
