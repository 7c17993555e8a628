import { WaitTimeoutError } from '../errors/index.js';
import { PositionWaiters } from './position-waiters.js';

describe('PositionWaiters', () => {
  it('resolves a waiter once its index is reached, and times out at once the waiters left when closed', async () => {
    // Given two waiters of one subscription
    const waiters = new PositionWaiters('s');
    const early = waiters.wait(0, 5, 60_000);
    const late = waiters.wait(0, 9, 60_000);
    // When index 6 is reached, then the subscription closes
    waiters.reached(6);
    waiters.close();
    // Then the first resolved, the second timed out instead of waiting forever
    await expect(early).resolves.toBe(6);
    await expect(late).rejects.toBeInstanceOf(WaitTimeoutError);
  });
});
