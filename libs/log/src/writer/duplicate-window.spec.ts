import { DuplicateWindow } from './duplicate-window.js';

describe('DuplicateWindow (L7)', () => {
  it('remembers loaded hashes for the next N messages, then switches off', () => {
    // Given a window of 3 that loaded the hash h1
    const window = new DuplicateWindow(3);
    window.load(['h1']);
    expect(window.isDuplicate('h1')).toBe(true);
    expect(window.isDuplicate('h2')).toBe(false);
    // When two messages are ingested, it still remembers both old and new
    window.record(['h2', 'h3']);
    expect(window.isDuplicate('h2')).toBe(true);
    // A message 1 place ahead is the last inside the window
    expect(window.isDuplicate('h1', 0)).toBe(true);
    expect(window.isDuplicate('h1', 1)).toBe(false);
    // When the third is ingested, the check is off
    window.record(['h4']);
    expect(window.isOpen()).toBe(false);
    expect(window.isDuplicate('h1')).toBe(false);
  });

  it('size 0 never reports a duplicate', () => {
    const window = new DuplicateWindow(0);
    window.load(['h1']);
    expect(window.isDuplicate('h1')).toBe(false);
  });
});
