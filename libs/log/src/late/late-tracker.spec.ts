import { LateTracker } from './late-tracker.js';

/** What a reader saves with its position for the watch it resumes (`owedSince`). */
describe('LateTracker.owedSince', () => {
  it('is null while nothing is watched, then the earliest time a watched position is owed from', () => {
    // Given a tracker watching nothing
    const tracker = new LateTracker();
    expect(tracker.owedSince()).toBeNull();
    // When positions are watched with the times they were recorded
    tracker.add([7], '10', new Date('2025-01-02T00:00:00Z'));
    tracker.add([3, 4], '10', new Date('2025-01-01T00:00:00Z'));
    // Then it owes from the earliest of them
    expect(tracker.owedSince()).toEqual(new Date('2025-01-01T00:00:00Z'));
    // And a position delivered in the same transaction as the save is left out
    tracker.forget(3);
    expect(tracker.owedSince(4)).toEqual(new Date('2025-01-02T00:00:00Z'));
    // And once nothing is watched any more it owes nothing
    tracker.forget(4);
    tracker.forget(7);
    expect(tracker.owedSince()).toBeNull();
  });

  it('counts a position added without a time from the epoch (it repeats, never misses)', () => {
    // Given a position watched without a time before any claim there
    const tracker = new LateTracker();
    tracker.add([5], '10', new Date('2025-01-01T00:00:00Z'));
    tracker.add([6], '10');
    // Then it is owed from the epoch
    expect(tracker.owedSince()).toEqual(new Date(0));
  });
});
