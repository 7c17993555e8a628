import { SampleRing } from './sample-ring.js';

const at = (second: number, head: number) => ({
  at: 1_000_000 + second * 1000,
  head,
  safeHead: head,
  hole: null,
  consumers: [],
});

describe('SampleRing', () => {
  it('computes the ingest rate from the head between samples', () => {
    const ring = new SampleRing(60_000);
    expect(ring.push(at(0, 10)).rate).toBeNull();
    expect(ring.push(at(2, 30)).rate).toBe(10);
    expect(ring.push(at(2.5, 31)).rate).toBe(2);
    // (a head that went down, a restored database say, is no negative rate)
    expect(ring.push(at(3.5, 5)).rate).toBe(0);
  });

  it('keeps only the window and answers what came after a time', () => {
    const ring = new SampleRing(3000);
    for (let s = 0; s <= 10; s++) ring.push(at(s, s));
    expect(ring.after().map((s) => s.head)).toEqual([7, 8, 9, 10]);
    expect(ring.after(1_000_000 + 8000).map((s) => s.head)).toEqual([9, 10]);
  });
});
