import { PageBudget, type BudgetHolder } from './page-budget.js';

const holder = (): BudgetHolder & { dropped: number } => ({
  dropped: 0,
  drop() {
    this.dropped++;
  },
});

describe('PageBudget', () => {
  it('counts a page shared by several holders once', () => {
    // Given a budget of 100 bytes and one page of 60 held by three feeds
    const budget = new PageBudget(100);
    const page = {};
    const [a, b, c] = [holder(), holder(), holder()];
    // When each holds it
    budget.hold(a, page, 60);
    budget.hold(b, page, 60);
    budget.hold(c, page, 60);
    // Then it counts 60 bytes and nobody is dropped
    expect(budget.bytes).toBe(60);
    expect(a.dropped + b.dropped + c.dropped).toBe(0);
    // And the bytes go only when the last holder lets go
    budget.release(a, page);
    budget.releaseAll(b);
    expect(budget.bytes).toBe(60);
    budget.release(c, page);
    expect(budget.bytes).toBe(0);
  });

  it('drops the holder with the largest share until the total is within the bound', () => {
    // Given a budget of 100 bytes, a feed holding 50 alone and two sharing a page of 40
    const budget = new PageBudget(100);
    const [alone, s1, s2, late] = [holder(), holder(), holder(), holder()];
    budget.hold(alone, { p: 1 }, 50);
    const shared = {};
    budget.hold(s1, shared, 40);
    budget.hold(s2, shared, 40);
    // When another feed's page takes the total over
    budget.hold(late, { p: 2 }, 30);
    // Then the one holding the most alone is dropped, its bytes released, the rest kept
    expect(alone.dropped).toBe(1);
    expect(s1.dropped + s2.dropped + late.dropped).toBe(0);
    expect(budget.bytes).toBe(70);
    expect(budget.dropped).toBe(1);
  });

  it('drops the holder that goes over when it holds the most', () => {
    const budget = new PageBudget(100);
    const [small, big] = [holder(), holder()];
    budget.hold(small, {}, 20);
    budget.hold(big, {}, 90);
    expect(big.dropped).toBe(1);
    expect(small.dropped).toBe(0);
    expect(budget.bytes).toBe(20);
  });
});
