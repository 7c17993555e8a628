import fc from 'fast-check';
import { replaceAt } from './json-pointer.js';
import { locate, messageTextParts, spliceClear } from './json-splice.js';

/** What the splice stands in for: parse the message, replace each value, drop `redacted`. */
function parsedWay(json: string, pointers: string[], values: unknown[]): unknown {
  const wire = JSON.parse(json) as { body: unknown; redacted?: unknown };
  pointers.forEach((pointer, i) => replaceAt(wire.body, pointer, values[i]));
  delete wire.redacted;
  return JSON.parse(JSON.stringify(wire));
}

function splice(json: string, pointers: string[], values: unknown[]): string | null {
  // A box holds the values as `JSON.stringify` writes their array.
  return spliceClear(json, messageTextParts(json), pointers, JSON.stringify(values));
}

/** jsonb's text of a value: `": "` and `", "` between members and elements. */
function jsonbText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${jsonbText(v)}`)
      .join(', ')}}`;
  return JSON.stringify(value);
}

/** A message as PostgreSQL renders it for a reader (compact members, the body as jsonb's text). */
const rendered = (body: unknown, redacted: string[] | null, tail = '') =>
  `{"id":7,"messageType":"T","userId":"u \\"body\\": {","body":${jsonbText(body)},"metadata":{"a": "}]"}` +
  `${redacted ? `,"redacted":${jsonbText(redacted)}` : ''}${tail}}`;

describe('splicing opened values into JSON text', () => {
  it('replaces the fields in the body, drops redacted and keeps the rest of the text', () => {
    // Given a rendered message whose body holds the replacements
    const body = { plan: 'gold', email: null, address: null, customerId: 'c-1' };
    const json = rendered(body, ['/email', '/address']);
    // When the clear values are spliced in
    const values = ['a@b.example', { street: '1 "Long" Road', city: 'Lyon' }];
    const out = splice(json, ['/email', '/address'], values)!;
    // Then the result is what parse, replace and stringify give, and untouched text stays as it was
    expect(JSON.parse(out)).toEqual(parsedWay(json, ['/email', '/address'], values));
    expect(out).toContain('"metadata":{"a": "}]"}');
    expect(out).toContain('"userId":"u \\"body\\": {"');
    expect(out).not.toContain('redacted');
  });

  it('finds nested fields, array elements and keys with escapes', () => {
    // Given a body with fields in nested objects, arrays and an escaped key
    const body = { a: { 'b/c': [1, { 'd~e': 'x' }] }, 'q"k': 'y', z: [] };
    const json = rendered(body, ['/a/b~1c/1/d~0e', '/q"k']);
    const pointers = ['/a/b~1c/1/d~0e', '/q"k', '/z/0', '/absent', '/a/b~1c/01'];
    const values = [{ clear: true }, 'clear', 'not there', 'nor here', 'nor here'];
    // When spliced
    const out = splice(json, pointers, values)!;
    // Then each present field has its value and absent ones add nothing, as replaceAt does
    expect(JSON.parse(out)).toEqual(parsedWay(json, pointers, values));
    expect(locate(json, messageTextParts(json).body!, '/z/0')).toBeNull();
  });

  it('answers null for a tombstone and for text without a body', () => {
    // Given a tombstone's JSON and a message without a body
    const tombstone = '{"id":3,"messageType":"T","tombstone":{"reason":"deleted"}}';
    // Then nothing is spliced: the caller keeps the text as it is
    expect(messageTextParts(tombstone).tombstone).toBe(true);
    expect(splice(tombstone, ['/email'], ['x'])).toBeNull();
    expect(splice('{"id":3}', ['/email'], ['x'])).toBeNull();
  });

  it('throws on text it cannot walk (the caller then parses)', () => {
    expect(() => messageTextParts('{"id":3,"body":{"a": "x}')).toThrow(SyntaxError);
    const json = rendered({ email: null }, ['/email']);
    expect(() =>
      spliceClear(json, messageTextParts(json), ['/email'], '{"not":"an array"}'),
    ).toThrow(SyntaxError);
  });

  it('answers null when the box does not hold one value per pointer (the caller then parses)', () => {
    // Given a message of two fields
    const json = rendered({ email: null, address: null }, ['/email', '/address']);
    const parts = messageTextParts(json);
    // Then fewer or more values than pointers splice nothing
    expect(spliceClear(json, parts, ['/email', '/address'], '["a@b.example"]')).toBeNull();
    expect(spliceClear(json, parts, ['/email'], '["a@b.example","x"]')).toBeNull();
    expect(spliceClear(json, parts, ['/email', '/address'], '[]')).toBeNull();
    // And values given in another order than the fields sit in the body land in their places
    const out = spliceClear(
      json,
      parts,
      ['/address', '/email'],
      '[{"city":"Lyon"}, "a@b.example"]',
    );
    expect(JSON.parse(out!)).toEqual(
      parsedWay(json, ['/address', '/email'], [{ city: 'Lyon' }, 'a@b.example']),
    );
  });

  it('gives what parse, replace and stringify give, for any body and fields', () => {
    const key = fc.constantFrom('email', 'address', 'a/b', 'c~d', 'é', '"q"', 'x\\y', '');
    const leaf = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(key, tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    const token = fc.oneof(key, fc.constantFrom('0', '1', '2'));
    const pointer = fc
      .array(token, { minLength: 1, maxLength: 3 })
      .map((ts) => '/' + ts.map((t) => t.replaceAll('~', '~0').replaceAll('/', '~1')).join('/'));
    fc.assert(
      fc.property(
        fc.dictionary(key, value, { maxKeys: 5 }),
        fc.uniqueArray(pointer, { maxLength: 3 }),
        fc.array(value, { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        (body, pointers, values, withRedacted) => {
          // Fields never nest (a rule refuses it): keep pointers that are no prefix of another
          const fields = pointers.filter(
            (p) =>
              !pointers.some((q) => q !== p && (q.startsWith(p + '/') || p.startsWith(q + '/'))),
          );
          const json = rendered(body, withRedacted ? fields : null);
          const out = splice(json, fields, values.slice(0, fields.length));
          expect(out).not.toBeNull();
          expect(JSON.parse(out!)).toEqual(parsedWay(json, fields, values));
        },
      ),
      { numRuns: 500 },
    );
  });
});
