import { renderClaimed } from './group-claim.sql.js';

describe('renderClaimed', () => {
  it('reads a run of neighbouring positions as one range, the list a filter outside the index condition', () => {
    const query = renderClaimed([103, 101, 102, 105]);
    expect(query.text).toMatch(
      /index >= \$2::bigint AND index <= \$3::bigint AND index \+ 0 = ANY\(\$1::bigint\[\]\)/,
    );
    expect(query.values).toEqual([[103, 101, 102, 105], 101, 105]);
  });

  it('looks a sparse batch up by its list, within its range', () => {
    const query = renderClaimed([7, 90_000]);
    expect(query.text).toMatch(/index <= \$3::bigint AND index = ANY\(\$1::bigint\[\]\)/);
    expect(query.values).toEqual([[7, 90_000], 7, 90_000]);
  });
});
