import {
  fieldContext,
  newDataKey,
  newDataKeys,
  open,
  openBase64,
  seal,
  subjectHash,
  tenantSubjectHash,
} from './personal-crypto.js';

describe('subject names', () => {
  it('keeps a subject of no tenant as it was, and gives each tenant its own subject, qualified', () => {
    const plain = 'a6f7ef47ee8dc84af9056a3051ddc302f19581a96eb7e12f510fdf550326a399';
    expect(subjectHash('c-1')).toBe(plain);
    expect(subjectHash('c-1', null)).toBe(plain);
    const acme = subjectHash('c-1', 'acme');
    expect(acme).toBe(tenantSubjectHash('acme', 'c-1'));
    expect(acme).toMatch(/^acme\/[0-9a-f]{64}$/);
    expect(acme.slice(5)).not.toBe(plain);
    expect(subjectHash('c-1', 'globex').slice(7)).not.toBe(acme.slice(5));
    // An untenanted id that looks qualified is still a subject of no tenant.
    expect(subjectHash('acme/c-1')).not.toContain('/');
  });
});

describe('sealing personal fields', () => {
  it('gives every box its own IV, across refills of the IV pool, and each opens', () => {
    // Given more boxes than the pool holds IVs (4,096)
    const key = newDataKey();
    const context = fieldContext('subject', '/email');
    const boxes = Array.from({ length: 10_000 }, (_, i) =>
      seal(key, Buffer.from(`v${i}`), context),
    );
    // Then no IV repeats, and each box opens to its own value
    const ivs = new Set(boxes.map((box) => box.subarray(1, 13).toString('hex')));
    expect(ivs.size).toBe(boxes.length);
    boxes.forEach((box, i) => expect(open(key, box, context).toString()).toBe(`v${i}`));
  });

  it('refuses a box under another key, another context or with a changed byte', () => {
    // Given a sealed value
    const key = newDataKey();
    const context = fieldContext('subject', '/email,/address');
    const box = seal(key, Buffer.from('["a@b.example",{"city":"Lyon"}]'), context);
    // Then it opens only as it was sealed
    expect(open(key, box, context).toString()).toBe('["a@b.example",{"city":"Lyon"}]');
    expect(() => open(newDataKey(), box, context)).toThrow();
    expect(() => open(key, box, fieldContext('other', '/email,/address'))).toThrow();
    const changed = Buffer.from(box);
    changed[changed.length - 1] ^= 1;
    expect(() => open(key, changed, context)).toThrow();
  });

  it('opens boxes given in base64 and contexts given as bytes, small boxes and large ones alike', () => {
    // Given boxes as the log stores them, one small and one larger than the decoding buffer
    const key = newDataKey();
    const context = fieldContext('subject', '/email,/address');
    const small = '["a@b.example",{"city":"Lyon"}]';
    const large = JSON.stringify(['x'.repeat(10_000)]);
    const [smallBox, largeBox] = [small, large].map((v) =>
      seal(key, Buffer.from(v), context).toString('base64'),
    );
    // Then each opens to its own value, one after the other, however the context is given
    expect(openBase64(key, smallBox, context).toString()).toBe(small);
    expect(openBase64(key, largeBox, Buffer.from(context)).toString()).toBe(large);
    expect(openBase64(key, smallBox, Buffer.from(context)).toString()).toBe(small);
    // And refuses another context, and a changed byte
    expect(() => openBase64(key, smallBox, fieldContext('other', '/email,/address'))).toThrow();
    const changed = Buffer.from(smallBox, 'base64');
    changed[changed.length - 1] ^= 1;
    expect(() => openBase64(key, changed.toString('base64'), context)).toThrow();
  });

  it('draws data keys of 32 bytes, each its own', () => {
    const keys = newDataKeys(64);
    expect(keys.every((key) => key.length === 32)).toBe(true);
    expect(new Set(keys.map((key) => key.toString('hex'))).size).toBe(64);
  });
});
