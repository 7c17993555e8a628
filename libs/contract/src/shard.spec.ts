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

  it('hashes the UTF-8 bytes of any string, ASCII or not, short or long', () => {
    // The reference: the same algorithm over TextEncoder's bytes, written plainly.
    const reference = (text: string, seed = 0) => {
      const data = new TextEncoder().encode(text);
      const mix = (k: number) =>
        Math.imul(((x) => (x << 15) | (x >>> 17))(Math.imul(k, 0xcc9e2d51)), 0x1b873593);
      let h = seed | 0;
      const blocks = data.length & ~3;
      for (let i = 0; i < blocks; i += 4) {
        h ^= mix(data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24));
        h = (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0;
      }
      let k = 0;
      for (let i = (data.length & 3) - 1; i >= 0; i--) k ^= data[blocks + i] << (8 * i);
      if (data.length & 3) h ^= mix(k);
      h ^= data.length;
      h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
      h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
      return (h ^ (h >>> 16)) | 0;
    };
    const texts = [
      'user-1',
      'order-77',
      'é',
      'user-ü-✓',
      'a\u0000b',
      '日本語のキー',
      'emoji 🙂 key',
      'x'.repeat(1000),
      'ü'.repeat(300),
      'tail-é',
    ];
    for (let n = 0; n < 300; n++)
      texts.push(
        String.fromCharCode(
          ...Array.from({ length: n % 17 }, (_, i) => (n * 31 + i * 7919) % 0x3000),
        ),
      );
    for (const text of texts) {
      expect(murmur3_32(text)).toBe(reference(text));
      expect(murmur3_32(text, 42)).toBe(reference(text, 42));
    }
    // A long key, then a short one: nothing of the first is left in the second's hash
    expect(murmur3_32('abc')).toBe(0xb3dd93fa | 0);
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
