import { type StoredMessage } from '@ordinal/log';
import { shardOf } from '@ordinal/contract';
import { InvalidProjectionError } from '../errors/index.js';
import { projectionPartitions } from './projection-partitions.js';
import { storedMessage } from '@ordinal/test-support/stored-message';

const message = (streamId: string | null, userId: string | null): StoredMessage =>
  storedMessage(1, { messageType: 'T', userId, contentHash: 'h', streamId });

describe('projectionPartitions', () => {
  it("one partition keeps the projection's own name and reads everything", () => {
    expect(projectionPartitions('p', undefined, undefined)).toEqual({
      names: ['p'],
      accepts: [undefined],
      acceptsKeys: [undefined],
    });
  });

  it('names partitions <name>#n and puts each key in exactly one: murmur3(key) mod n', () => {
    const { names, accepts } = projectionPartitions('order-summary', 8, 'streamId');
    expect(names).toEqual(Array.from({ length: 8 }, (_, i) => `order-summary#${i}`));
    for (const key of ['order-1', 'order-2', 'order-77', '']) {
      const owners = accepts.map((a, i) => (a!(message(key, null)) ? i : -1)).filter((i) => i >= 0);
      expect(owners).toEqual([shardOf(key, 8)]);
    }
  });

  it('tests the keys alone the same way for streamId and userId, not for a function of the message', () => {
    for (const by of ['streamId', 'userId'] as const) {
      const { accepts, acceptsKeys } = projectionPartitions('p', 5, by);
      for (const key of ['order-1', 'user-ü-✓', '', 'x'.repeat(37)]) {
        const m = by === 'streamId' ? message(key, 'other') : message('other', key);
        const keys = {
          id: 1,
          messageType: 'T',
          streamId: m.streamId,
          userId: m.userId,
          tenant: null,
        };
        expect(acceptsKeys.map((a) => a!(keys))).toEqual(accepts.map((a) => a!(m)));
        expect(acceptsKeys.filter((a) => a!(keys))).toHaveLength(1);
      }
    }
    expect(projectionPartitions('p', 4, (m) => m.messageType).acceptsKeys).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('keys by userId or by a function of the message', () => {
    const byUser = projectionPartitions('p', 4, 'userId');
    expect(byUser.accepts[shardOf('alice', 4)]!(message('s-1', 'alice'))).toBe(true);
    const byFn = projectionPartitions('p', 4, (m) => String((m.body as { k?: string }).k ?? 'x'));
    expect(byFn.accepts[shardOf('x', 4)]!(message(null, null))).toBe(true);
  });

  it('refuses counts and keys that cannot work, saying what to use', () => {
    expect(() => projectionPartitions('p', 0, undefined)).toThrow(InvalidProjectionError);
    expect(() => projectionPartitions('p', 2.5, undefined)).toThrow(/whole number from 1 to 1024/);
    expect(() => projectionPartitions('p', 2, 'tenant' as never)).toThrow(
      /'streamId', 'userId' or a function/,
    );
  });
});
