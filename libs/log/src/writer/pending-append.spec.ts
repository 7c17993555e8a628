import { InvalidMessageError } from '../errors/index.js';
import { hasNulEscape, isStorableText } from '../jsonb-text.js';
import { rowsJson } from '../sql/insert-messages.sql.js';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { JSON_LIMITS, inexactNumberIn, jsonValueProblem, prepareMessage, toStorableJson } from './pending-append.js';

describe('prepareMessage', () => {
  it('serialises body and metadata once and hashes the body', () => {
    const prepared = prepareMessage({ messageType: 'A', body: { k: 1 }, metadata: { m: true } });
    expect(prepared.bodyJson).toBe('{"k":1}');
    expect(prepared.hash).toBe(createHash('sha256').update('{"k":1}').digest('hex'));
    expect(prepared.metadataJson).toBe('{"m":true}');
    expect(prepared.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(prepareMessage({ messageType: 'A', body: { k: 1 } }).hash).toBe(prepared.hash);
  });

  it('refuses a NUL character in the content or the metadata with InvalidMessageError, naming which', () => {
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'a\u0000b' } })).toThrow(InvalidMessageError);
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'a\u0000b' } })).toThrow(/content/);
    expect(() => prepareMessage({ messageType: 'A', body: {}, metadata: { s: '\u0000' } })).toThrow(/metadata/);
  });

  it('tells an escaped NUL from an escaped backslash followed by u0000', () => {
    expect(hasNulEscape(JSON.stringify({ s: '\u0000' }))).toBe(true);
    expect(hasNulEscape(JSON.stringify({ s: '\\u0000' }))).toBe(false);
    expect(hasNulEscape(JSON.stringify({ s: '\\\u0000' }))).toBe(true);
    expect(hasNulEscape(JSON.stringify({ s: '\\u0000', t: '\u0000' }))).toBe(true);
    expect(hasNulEscape(null)).toBe(false);
  });

  it('refuses text fields PostgreSQL cannot store as given, and a missing or non-string type', () => {
    expect(() => prepareMessage({ messageType: 'A', userId: 'x\ud800', body: {} })).toThrow(/userId/);
    expect(() => prepareMessage({ messageType: 'A', idempotencyKey: 'k\u0000', body: {} })).toThrow(/idempotencyKey/);
    expect(() => prepareMessage({ messageType: undefined as unknown as string, body: {} })).toThrow(/messageType is required/);
    expect(() => prepareMessage({ messageType: 7 as unknown as string, body: {} })).toThrow(/messageType must be a string/);
    expect(() => prepareMessage({ messageType: 'A', body: undefined })).toThrow(/content must be JSON/);
    expect(() => prepareMessage({ messageType: 'A', userId: 'emoji 😀', body: {} })).not.toThrow();
  });
});

describe('the JSON rules every entry path shares', () => {
  it('refuses what cannot be read back exactly, naming the path', () => {
    // Given values JSON.parse has already rounded or PostgreSQL cannot store
    const cases: [unknown, RegExp][] = [
      [{ a: { b: [1, 9007199254740992] } }, /^content\.a\.b\.1 is an integer beyond/],
      [{ n: Infinity }, /^content\.n is a number/],
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
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'x\ud800' } })).toThrow(/content\.s/);
  });

  it('refuses nesting deeper than the limit without overflowing the stack', () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonValueProblem(deep, 'content')?.reason).toMatch(new RegExp(`deeper than ${JSON_LIMITS.maxDepth}`));
    let ok: unknown = 1;
    for (let i = 0; i < JSON_LIMITS.maxDepth; i++) ok = [ok];
    expect(jsonValueProblem(ok, 'content')).toBeNull();
    expect(jsonValueProblem([ok], 'content')).not.toBeNull();
  });

  it('keeps __proto__ and constructor as ordinary keys', () => {
    const body = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}');
    const prepared = prepareMessage({ messageType: 'A', body });
    expect(JSON.stringify(prepared.message.body)).toBe('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(prepared.message.body)).toBe(Object.prototype);
  });

  it('orders keys as jsonb does (length, then bytes) and canonicalises as RFC 8785 (UTF-16 order)', () => {
    const prepared = prepareMessage({ messageType: 'A', body: { bb: 1, a: 2, é: 3, z: 4, '😀': 5, '10': 6, '9': 7 } });
    expect(Object.keys(prepared.message.body as object)).toEqual(['9', '10', 'a', 'z', 'bb', 'é', '😀']);
    expect(prepared.bodyJson).toBe('{"10":6,"9":7,"a":2,"bb":1,"z":4,"é":3,"😀":5}');
  });

  it('gives the canonical text of any JSON value, the same whatever the key order (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const built = toStorableJson(value, 'v');
        if ('reason' in built) return;
        const reordered = JSON.parse(JSON.stringify(value, (_k, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v)));
        expect((toStorableJson(reordered, 'v') as { canonical: string }).canonical).toBe(built.canonical);
        expect(JSON.parse(built.canonical)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe('inexactNumberIn', () => {
  it('finds numbers JSON.parse would round, with their path', () => {
    expect(inexactNumberIn('{"a":[1,{"b c":1.00000000000000000001}]}', 'content')).toEqual({ path: 'content.a.1["b c"]', reason: expect.stringMatching(/1\.00000000000000000001, .* reads as 1\);/) });
    expect(inexactNumberIn('{"n":1e-400}', '')?.path).toBe('n');
    expect(inexactNumberIn('{"n":1e400}', '')?.path).toBe('n');
    expect(inexactNumberIn('{"messages":[{"content":{"n":9007199254740993}}]}', '')?.path).toBe('messages.0.content.n');
    expect(inexactNumberIn('[0,"1e999",{"k\\"":123456789012345678}]', 'x')?.path).toBe('x.2["k\\""]');
  });

  it('lets every number through that reads back as written', () => {
    for (const text of ['0.1', '-0', '1.5e-7', '1E+2', '123.4560', '0.30000000000000004', '9007199254740991', '-2.5e-300', '1e21', '100']) {
      expect([text, inexactNumberIn(`{"n":${text}}`, '')]).toEqual([text, null]);
    }
  });

  it('agrees with JSON.parse on random doubles written in their shortest form (property)', () => {
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
      expect(inexactNumberIn(`[${JSON.stringify(n)}]`, '')).toBeNull();
    }));
  });
});

describe('isStorableText', () => {
  it('accepts paired surrogates and refuses NUL and unpaired ones', () => {
    expect(isStorableText('plain ✓ 😀')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud83d')).toBe(false);
    expect(isStorableText('\ude00x')).toBe(false);
    expect(isStorableText('x\ud83d\ude00')).toBe(true);
  });
});

describe('rowsJson', () => {
  it('writes valid JSON with nulls for missing values and bodies as they are', () => {
    const text = rowsJson({
      index: [1], messageType: ['A "quoted" \\ type'], userId: [undefined as unknown as null], streamId: [null], streamVersion: [null],
      category: [null], body: ['{"k":[1,"\\u0000 text"]}'], metadata: [null], schemaVersion: [1], contentHash: ['h'], idempotencyKey: [null],
    });
    expect(JSON.parse(text)).toEqual([
      { message_type: 'A "quoted" \\ type', user_id: null, stream_id: null, stream_version: null, category: null, body: { k: [1, '\u0000 text'] }, metadata: null, schema_version: 1, content_hash: 'h', idempotency_key: null },
    ]);
  });
});
