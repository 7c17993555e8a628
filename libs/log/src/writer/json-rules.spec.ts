import fc from 'fast-check';
import { JSON_LIMITS, jsonValueProblem, toStorableJson } from '@ordinal/pg';
import { prepareMessage } from './pending-append.js';

describe('the JSON rules every entry path shares', () => {
  it('refuses what cannot be read back exactly, naming the path', () => {
    // Given values no JSON number can carry or PostgreSQL cannot store
    const cases: [unknown, RegExp][] = [
      [{ a: { b: [1, Infinity] } }, /^content\.a\.b\.1 is a number/],
      [{ n: NaN }, /^content\.n is a number/],
      [{ s: 'x\ud800' }, /^content\.s has a NUL character .* or an unpaired surrogate/],
      [{ 'odd key': { k: '\u0000' } }, /^content\["odd key"\]\.k has/],
      [{ ['k\udc00']: 1 }, /\(this key\)/],
    ];
    for (const [value, reason] of cases) {
      const problem = jsonValueProblem(value, 'content');
      // Then the path and the reason come back, the same from both walks
      expect(`${problem?.path} ${problem?.reason}`).toMatch(reason);
      expect(toStorableJson(value, 'content')).toEqual(problem);
    }
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'x\ud800' } })).toThrow(
      /content\.s/,
    );
  });

  it('keeps every finite number, integers beyond 2^53 included: each reads back as the same double', () => {
    // Given doubles that are integers beyond 2^53 − 1, and the extremes of the range
    const numbers = [2 ** 53, -(2 ** 60), 1e20, 6.02e23, 1.5e300, -Number.MAX_VALUE, 5e-324];
    // Then both walks keep them, and the canonical text reads back as the same values
    expect(jsonValueProblem({ numbers }, 'content')).toBeNull();
    const stored = toStorableJson({ numbers }, 'content');
    expect('canonical' in stored && JSON.parse(stored.canonical)).toEqual({ numbers });
  });

  it('refuses nesting deeper than the limit without overflowing the stack', () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonValueProblem(deep, 'content')?.reason).toMatch(
      new RegExp(`deeper than ${JSON_LIMITS.maxDepth}`),
    );
    let ok: unknown = 1;
    for (let i = 0; i < JSON_LIMITS.maxDepth; i++) ok = [ok];
    expect(jsonValueProblem(ok, 'content')).toBeNull();
    expect(jsonValueProblem([ok], 'content')).not.toBeNull();
  });

  it('keeps __proto__ and constructor as ordinary keys', () => {
    const body: unknown = JSON.parse(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":1}}',
    );
    const prepared = prepareMessage({ messageType: 'A', body });
    expect(JSON.stringify(prepared.message.body)).toBe(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":1}}',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(prepared.message.body)).toBe(Object.prototype);
  });

  it('orders keys as jsonb does (length, then bytes) and canonicalises as RFC 8785 (UTF-16 order)', () => {
    const prepared = prepareMessage({
      messageType: 'A',
      body: { bb: 1, a: 2, é: 3, z: 4, '😀': 5, '10': 6, '9': 7 },
    });
    expect(Object.keys(prepared.message.body as object)).toEqual([
      '9',
      '10',
      'a',
      'z',
      'bb',
      'é',
      '😀',
    ]);
    expect(prepared.bodyJson).toBe('{"10":6,"9":7,"a":2,"bb":1,"z":4,"é":3,"😀":5}');
  });

  it('gives the canonical text of any JSON value, the same whatever the key order (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const built = toStorableJson(value, 'v');
        if ('reason' in built) return;
        const reordered: unknown = JSON.parse(
          JSON.stringify(value, (_k, v: unknown) =>
            v && typeof v === 'object' && !Array.isArray(v)
              ? Object.fromEntries(Object.entries(v).reverse())
              : v,
          ),
        );
        expect((toStorableJson(reordered, 'v') as { canonical: string }).canonical).toBe(
          built.canonical,
        );
        expect(JSON.parse(built.canonical)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});
