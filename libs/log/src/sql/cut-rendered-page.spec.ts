import { cutRenderedPage } from './read-page.sql.js';

const row = (chars: number, storedThrough = 0) => ({
  json: 'x'.repeat(chars),
  stored_through: storedThrough,
});

describe('cutRenderedPage', () => {
  it('keeps rows while the JSON before them is under the bound, the first always', () => {
    // Given rows of 400 characters and a bound of 1,000
    const page = cutRenderedPage([row(400), row(400), row(400), row(400)], 1000);
    // Then three are kept (800 before the third, 1,200 before the fourth) and the page says it was cut
    expect(page.rows).toHaveLength(3);
    expect(page.cut).toBe(true);
    // And one row over the bound on its own still comes
    expect(cutRenderedPage([row(5000), row(10)], 1000)).toEqual({ rows: [row(5000)], cut: true });
  });

  it('says a page stopped by the stored sizes may have stopped early', () => {
    expect(cutRenderedPage([row(10, 100), row(10, 1200)], 1000).cut).toBe(true);
    expect(cutRenderedPage([row(10, 100), row(10, 200)], 1000)).toEqual({
      rows: [row(10, 100), row(10, 200)],
      cut: false,
    });
    expect(cutRenderedPage([], 1000)).toEqual({ rows: [], cut: false });
  });
});
