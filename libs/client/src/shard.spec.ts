import * as server from '@ordinal/log';
import { murmur3_32, shardOf } from './shard.js';

describe('the client shard function is the server one (L9)', () => {
  it('gives the same hash and shard on many inputs, ASCII and not', () => {
    // Given user ids of every length 0..40, with multi-byte characters mixed in
    const alphabet = ['a', 'Z', '7', '-', 'é', 'ß', '中', '😀', ' ', '\u0000'];
    let state = 12345;
    const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const inputs = ['', 'customer-1', 'system'];
    for (let i = 0; i < 2000; i++) {
      const length = Math.floor(random() * 41);
      inputs.push(
        Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''),
      );
    }
    // Then the client and the server agree on every one
    for (const input of inputs) {
      expect(murmur3_32(input)).toBe(server.murmur3_32(input));
      for (const count of [1, 2, 3, 7, 64])
        expect(shardOf(input, count)).toBe(server.shardOf(input, count));
    }
    expect(shardOf(null, 5)).toBe(server.shardOf(null, 5));
  });

  it('matches the published vectors', () => {
    expect(murmur3_32('hello')).toBe(613153351);
    expect(murmur3_32('foo', 42)).toBe(-1322301282);
    expect(murmur3_32('The quick brown fox jumps over the lazy dog', 0x9747b28c)).toBe(0x2fa826cd);
  });
});
