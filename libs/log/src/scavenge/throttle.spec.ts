import { resolveLogOptions, throttlePercent } from '../log-options.js';
import { throttleRestMs } from './log-scavenger.service.js';

describe('the scavenge throttle', () => {
  it('rests in proportion to the batch: none at 100%, as long as the batch at 50%, three times it at 25%', () => {
    expect(throttleRestMs(40, 100)).toBe(0);
    expect(throttleRestMs(40, 50)).toBe(40);
    expect(throttleRestMs(40, 25)).toBe(120);
    expect(throttleRestMs(40, 1)).toBe(3960);
    // (a clock that went back gives no negative rest)
    expect(throttleRestMs(-5, 50)).toBe(0);
  });

  it('defaults to 25% and refuses anything but a whole percent from 1 to 100, naming the option', () => {
    expect(resolveLogOptions({}).scavengeThrottlePercent).toBe(25);
    expect(resolveLogOptions({ scavengeThrottlePercent: 100 }).scavengeThrottlePercent).toBe(100);
    for (const bad of [0, 101, 12.5, -1])
      expect(() => resolveLogOptions({ scavengeThrottlePercent: bad })).toThrow(
        /log\.scavengeThrottlePercent must be .*(at least 1|from 1 to 100).*ORDINAL_SCAVENGE_THROTTLE_PERCENT/,
      );
    expect(() => throttlePercent(0, { option: 'throttlePercent' })).toThrow(
      /throttlePercent must be/,
    );
  });
});
