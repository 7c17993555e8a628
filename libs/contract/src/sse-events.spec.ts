import { isSseEventName, SSE_EVENT_NAMES } from './sse-events.js';

describe('the SSE event names', () => {
  it('lists every event once, in the order a stream first sends them', () => {
    expect(SSE_EVENT_NAMES).toEqual([
      'connected',
      'message',
      'tombstone',
      'late-message',
      'heartbeat',
      'stream-ended',
    ]);
    expect(Object.isFrozen(SSE_EVENT_NAMES)).toBe(true);
  });

  it('knows its own names and nothing inherited', () => {
    expect(SSE_EVENT_NAMES.every(isSseEventName)).toBe(true);
    for (const other of ['', 'error', 'Message', 'toString', '__proto__', 'constructor'])
      expect(isSseEventName(other)).toBe(false);
  });
});
