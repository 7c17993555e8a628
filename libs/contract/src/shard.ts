const encoder = new TextEncoder();
/** The bytes of the string being hashed (grown as needed, never shrunk): no allocation per hash. */
let scratch = new Uint8Array(256);

/** `text`'s UTF-8 bytes into `scratch`; their count. ASCII (most keys) is copied without the encoder. */
function utf8Into(text: string): number {
  if (scratch.length < text.length * 3) scratch = new Uint8Array(text.length * 3);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return encoder.encodeInto(text, scratch).written;
    scratch[i] = code;
  }
  return text.length;
}

/**
 * MurmurHash3 x86 32-bit of a string's UTF-8 bytes, as a signed 32-bit integer (Guava's
 * `murmur3_32_fixed().hashString(s, UTF_8).asInt()`, Python's `mmh3.hash`). The server uses
 * the same function, so a client can predict which shard holds a user.
 */
export function murmur3_32(text: string, seed = 0): number {
  const length = utf8Into(text);
  const data = scratch;
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed | 0;
  const blocks = length & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  switch (length & 3) {
    case 3:
      k ^= data[blocks + 2] << 16;
    // falls through
    case 2:
      k ^= data[blocks + 1] << 8;
    // falls through
    case 1:
      k ^= data[blocks];
      k = Math.imul(k, c1);
      k = (k << 15) | (k >>> 17);
      k = Math.imul(k, c2);
      h ^= k;
  }
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** The shard of a user among `count`: floorMod(murmur3_32(userId ?? ''), count). */
export function shardOf(userId: string | null | undefined, count: number): number {
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`Shard count must be a positive integer, got ${count}`);
  const h = murmur3_32(userId ?? '', 0);
  return ((h % count) + count) % count;
}
