import { murmur3_32, shardOf } from './shard.js';

describe('murmur3_32 and shardOf (L9)', () => {
  // Published MurmurHash3 x86_32 vectors (SMHasher, Python mmh3), as signed 32-bit integers.
  it.each([
    ['', 0, 0],
    ['', 1, 0x514e28b7 | 0],
    ['\0\0\0\0', 0, 0x2362f9de | 0],
    ['aaaa', 0x9747b28c, 0x5a97808a | 0],
    ['abc', 0, 0xb3dd93fa | 0],
    ['Hello, world!', 0x9747b28c, 0x24884cba | 0],
    ['The quick brown fox jumps over the lazy dog', 0x9747b28c, 0x2fa826cd | 0],
    ['hello', 0, 613153351],
    ['foo', 0, -156908512],
    ['foo', 42, -1322301282],
  ])('murmur3_32(%j, %d) = %d', (text, seed, expected) => {
    expect(murmur3_32(text, seed)).toBe(expected);
  });

  it('floors negative hashes into [0, count) and hashes no user as ""', () => {
    // Given a user whose hash is negative
    expect(murmur3_32('foo')).toBeLessThan(0);
    // Then its shard is the floor modulus, never negative
    expect(shardOf('foo', 3)).toBe(((-156908512 % 3) + 3) % 3);
    expect(shardOf('foo', 1)).toBe(0);
    // And null and undefined users share the shard of ""
    expect(shardOf(null, 7)).toBe(shardOf('', 7));
    expect(shardOf(undefined, 7)).toBe(0);
  });

  it('refuses a count below 1', () => {
    expect(() => shardOf('a', 0)).toThrow(RangeError);
    expect(() => shardOf('a', 1.5)).toThrow(RangeError);
  });
});
