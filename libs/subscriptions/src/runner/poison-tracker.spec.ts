import { HandlerFailedError } from '../errors/index.js';
import { PoisonTracker } from './poison-tracker.js';

const failure = (index: number) => new HandlerFailedError('p', index, new Error(`bad ${index}`));

describe('PoisonTracker (error policies without I/O)', () => {
  it('retries forever by default', () => {
    const tracker = new PoisonTracker(undefined);
    for (let i = 0; i < 50; i++) expect(tracker.failed(failure(7), false)).toBe('retry');
    expect(tracker.halted).toBe(false);
  });

  it('counts failures of one message in a row; another message starts over', () => {
    const tracker = new PoisonTracker({ retries: 2, then: 'skip' });
    expect(tracker.failed(failure(7), false)).toBe('retry');
    expect(tracker.failed(failure(8), false)).toBe('retry');
    expect(tracker.failed(failure(8), false)).toBe('retry');
    expect(tracker.failed(failure(8), false)).toBe('skip');
    expect(tracker.setAside).toEqual({ index: 8, action: 'skip', error: 'bad 8', failures: 3 });
    tracker.passed(tracker.setAside!);
    expect([tracker.setAside, tracker.skipped, tracker.parked]).toEqual([null, 1, 0]);
  });

  it('stop halts; resume counts afresh', () => {
    const tracker = new PoisonTracker({ retries: 0, then: 'stop' });
    expect(tracker.failed(failure(3), false)).toBe('stop');
    expect(tracker.halted).toBe(true);
    tracker.resume();
    expect(tracker.halted).toBe(false);
  });

  it('while replaying, the rebuild action applies (stop by default), not then', () => {
    expect(new PoisonTracker({ retries: 0, then: 'park' }).failed(failure(3), true)).toBe('stop');
    const parking = new PoisonTracker({ retries: 0, then: 'stop', rebuild: 'park' });
    expect(parking.failed(failure(3), true)).toBe('park');
    parking.passed(parking.setAside!);
    expect(parking.parked).toBe(1);
  });
});
