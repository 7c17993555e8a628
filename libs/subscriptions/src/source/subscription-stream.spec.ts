import type { StoredMessage } from '@ordinal/log';
import {
  describeStream,
  isCategoryStream,
  streamAccepts,
  streamTypes,
} from './subscription-stream.js';
import { storedMessage } from '@ordinal/test-support/stored-message';

const message = (messageType: string, streamId: string | null): StoredMessage =>
  storedMessage(1, { messageType, contentHash: 'h', streamId, streamVersion: streamId ? 1 : null });

describe('subscription streams', () => {
  it('accepts by type, by category, or everything', () => {
    // Given one message of type OrderPlaced in stream order-1
    const m = message('OrderPlaced', 'order-1');
    // Then each stream kind decides by its own rule
    expect(streamAccepts('$all', m)).toBe(true);
    expect(streamAccepts({ types: ['OrderPlaced'] }, m)).toBe(true);
    expect(streamAccepts({ types: ['Other'] }, m)).toBe(false);
    expect(streamAccepts({ category: 'order' }, m)).toBe(true);
    expect(streamAccepts({ category: 'invoice' }, m)).toBe(false);
    expect(streamAccepts({ category: 'order' }, message('OrderPlaced', null))).toBe(false);
  });

  it('describes streams and tells category streams apart', () => {
    expect(describeStream('$all')).toBe('$all');
    expect(describeStream({ types: ['A', 'B'] })).toBe('types:A,B');
    expect(describeStream({ category: 'order' })).toBe('category:order');
    expect(isCategoryStream({ category: 'x' })).toBe(true);
    expect(isCategoryStream('$all')).toBe(false);
    expect(streamTypes({ types: [] })).toBeUndefined();
    expect(streamTypes({ types: ['A'] })).toEqual(['A']);
  });
});
