import { PacedRun } from './paced-run.js';

describe('PacedRun', () => {
  it('runs one at a time: asks during a run make one more run right after it, not one each', async () => {
    // Given a run whose work waits until the test lets it finish, paced an hour apart
    const releases: (() => void)[] = [];
    let runs = 0;
    const paced = new PacedRun(
      () => {
        runs++;
        return new Promise<void>((resolve) => releases.push(resolve));
      },
      () => 3_600_000,
    );
    // When it is asked three times while its first run is in flight
    paced.now();
    paced.now();
    paced.now();
    expect(runs).toBe(1);
    releases.shift()!();
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Then it runs once more, right after the first, and then waits for its pace
    expect(runs).toBe(2);
    releases.shift()!();
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(runs).toBe(2);
    paced.close();
  });

  it('goes on after a run that throws, and runs no more once closed', async () => {
    // Given work that fails
    let runs = 0;
    const paced = new PacedRun(
      () => {
        runs++;
        return Promise.reject(new Error('database away'));
      },
      () => 3_600_000,
    );
    // When it runs, fails, and is asked again
    paced.now();
    await new Promise<void>((resolve) => setImmediate(resolve));
    paced.now();
    expect(runs).toBe(2);
    // Then once closed, an ask runs nothing
    paced.close();
    paced.now();
    expect(runs).toBe(2);
  });
});
