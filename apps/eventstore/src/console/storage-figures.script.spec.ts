import { runInNewContext } from 'node:vm';
import { humanBytes, STORAGE_FIGURES_SCRIPT, tierTotals } from './storage-figures.script.js';

const SIZES: [number, string][] = [
  [0, '0 bytes'],
  [1023, '1023 bytes'],
  [1024, '1.0 KiB'],
  [1536, '1.5 KiB'],
  [99.94 * 1024, '99.9 KiB'],
  [99.96 * 1024, '100 KiB'],
  [150 * 1024, '150 KiB'],
  [1023.4 * 1024, '1023 KiB'],
  [1023.6 * 1024, '1.0 MiB'],
  [24 * 1024 ** 2, '24.0 MiB'],
  [118.2 * 1024 ** 3, '118 GiB'],
  [3 * 1024 ** 4, '3.0 TiB'],
  [2048 * 1024 ** 5, '2048 PiB'],
];

const SEGMENTS = [
  { tier: 'hot', bytes: 1000, estimatedRows: 1000 },
  { tier: 'hot', bytes: 500, estimatedRows: null },
  { tier: 'archived', bytes: 0, estimatedRows: 7 },
  { tier: 'hot', bytes: 24, estimatedRows: 0 },
];

const TOTALS = [
  { tier: 'hot', segments: 3, bytes: 1524, estimatedRows: 1000, unanalysed: 1 },
  { tier: 'archived', segments: 1, bytes: 0, estimatedRows: 7, unanalysed: 0 },
];

describe('the storage view’s figures', () => {
  it('prints a size in binary units, one decimal below 100', () => {
    for (const [bytes, text] of SIZES) expect([bytes, humanBytes(bytes)]).toEqual([bytes, text]);
  });

  it('totals the segments per tier, in order, counting the unanalysed apart', () => {
    expect(tierTotals(SEGMENTS)).toEqual(TOTALS);
    expect(tierTotals([])).toEqual([]);
  });

  it('runs as the browser gets it: its source alone, in an empty context', () => {
    // Given nothing but the served script (no module scope, no Node globals)
    const run = `${STORAGE_FIGURES_SCRIPT}
      JSON.stringify({ sizes: sizes.map(humanBytes), totals: tierTotals(segments) });`;
    // When it computes the same figures
    const out: unknown = JSON.parse(
      runInNewContext(run, { sizes: SIZES.map(([b]) => b), segments: SEGMENTS }) as string,
    );
    // Then they are the module's
    expect(out).toEqual({ sizes: SIZES.map(([, t]) => t), totals: TOTALS });
  });
});
