import fc from 'fast-check';
import { toCanonicalJson, toStorableJson } from '@ordinal/pg';

describe('toCanonicalJson (the import path) against toStorableJson (every other entry path)', () => {
  it('gives the same canonical text for any value, and refuses exactly the values the other refuses', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue(), fc.object(), fc.anything({ withNullPrototype: false })),
        (value) => {
          // Given any value, When both walk it, Then they agree on its text, or both refuse it
          // (with several problems each may name another first: it walks keys sorted)
          const storable = toStorableJson(value, 'content');
          const canonical = toCanonicalJson(value, 'content');
          if ('canonical' in storable) expect(canonical).toBe(storable.canonical);
          else expect(typeof canonical).toBe('object');
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('sorts keys by UTF-16 code units, integer-like keys as text, and refuses what the rules refuse', () => {
    expect(toCanonicalJson({ b: 1, a: [true, null], 10: 'x', 9: 'y', é: 0 }, 'c')).toBe(
      '{"10":"x","9":"y","a":[true,null],"b":1,"é":0}',
    );
    expect(toCanonicalJson({ a: { n: 2 ** 53, m: 1e20 } }, 'content')).toBe(
      '{"a":{"m":100000000000000000000,"n":9007199254740992}}',
    );
    expect(toCanonicalJson({ a: { n: Infinity } }, 'content')).toEqual({
      path: 'content.a.n',
      reason: expect.stringContaining('out of range') as unknown,
    });
    expect(toCanonicalJson({ s: 'a\u0000' }, 'content')).toEqual({
      path: 'content.s',
      reason: expect.stringContaining('NUL') as unknown,
    });
  });
});
