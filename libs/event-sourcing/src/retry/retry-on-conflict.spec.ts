import { VersionConflictError } from '@ordinal/log';
import { retryOnConflict } from './retry-on-conflict.js';

describe('retryOnConflict', () => {
  const conflict = () => new VersionConflictError('order-1', 2, 1);

  it('retries a conflict and returns the first success', async () => {
    // Given a command that conflicts twice
    let calls = 0;
    const result = await retryOnConflict(
      // eslint-disable-next-line @typescript-eslint/require-await -- the command must be async; this one is not
      async (attempt) => {
        calls += 1;
        if (attempt < 3) throw conflict();
        return 'done';
      },
      { backoffMs: 0 },
    );
    // Then the third try's result comes back
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('rethrows the last conflict after 3 tries by default', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(
        // eslint-disable-next-line @typescript-eslint/require-await -- the command must be async; this one is not
        async () => {
          calls += 1;
          throw conflict();
        },
        { backoffMs: 0 },
      ),
    ).rejects.toBeInstanceOf(VersionConflictError);
    expect(calls).toBe(3);
  });

  it('does not retry other errors', async () => {
    let calls = 0;
    await expect(
      // eslint-disable-next-line @typescript-eslint/require-await -- the command must be async; this one is not
      retryOnConflict(async () => {
        calls += 1;
        throw new Error('rule broken');
      }),
    ).rejects.toThrow('rule broken');
    expect(calls).toBe(1);
  });
});
