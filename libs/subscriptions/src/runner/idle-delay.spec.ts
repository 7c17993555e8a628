import { IDLE_BACKOFF_MAX_MS, idleBackoffMs } from './idle-delay.js';
import { Wake } from './wake.js';

describe('idleBackoffMs', () => {
  it('stays at idlePollMs while NOTIFY does not reach the process', () => {
    expect([0, 1, 5, 50].map((r) => idleBackoffMs(250, r, false))).toEqual([250, 250, 250, 250]);
  });

  it('doubles from idlePollMs up to the cap while NOTIFY reaches the process', () => {
    expect([0, 1, 2, 3].map((r) => idleBackoffMs(50, r, true))).toEqual([50, 100, 200, 400]);
    expect(idleBackoffMs(50, 12, true)).toBe(IDLE_BACKOFF_MAX_MS);
    expect(idleBackoffMs(50, 10_000, true)).toBe(IDLE_BACKOFF_MAX_MS);
  });

  it('never goes below an idlePollMs set above the cap', () => {
    expect(idleBackoffMs(60_000, 0, true)).toBe(60_000);
    expect(idleBackoffMs(60_000, 3, true)).toBe(60_000);
  });
});

describe('Wake', () => {
  it('tells whether a signal woke the wait, and keeps a signal given while nobody waits', async () => {
    const wake = new Wake();
    expect(await wake.wait(1)).toBe(false);
    const waiting = wake.wait(60_000);
    wake.signal();
    expect(await waiting).toBe(true);
    wake.signal();
    expect(await wake.wait(60_000)).toBe(true);
  });
});
