import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  const policy = { initialMs: 100, maxMs: 5000, jitter: 0.2 };

  it('doubles from the initial delay and stops at the cap', () => {
    // Given no randomness
    const none = () => 0;
    // When the attempts grow
    const delays = [0, 1, 2, 3, 6, 7, 100].map((a) => backoffDelay(a, policy, none));
    // Then each doubles until the cap
    expect(delays).toEqual([100, 200, 400, 800, 5000, 5000, 5000]);
  });

  it('draws jitter below the delay, never above the cap', () => {
    // Given the largest random draw
    const most = () => 0.999;
    // When the delay is computed at and below the cap
    // Then it is reduced by at most the jitter fraction
    expect(backoffDelay(0, policy, most)).toBe(80);
    expect(backoffDelay(10, policy, most)).toBeLessThanOrEqual(5000);
    expect(backoffDelay(10, policy, most)).toBeGreaterThanOrEqual(4000);
  });
});
