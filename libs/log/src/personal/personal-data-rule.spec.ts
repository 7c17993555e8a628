import { randomBytes } from 'node:crypto';
import { InvalidPersonalDataRuleError } from '../errors/index.js';
import { replaceAt, valueAt, withValueAt } from './json-pointer.js';
import { resolvePersonalDataRule } from './personal-data-rule.js';
import { fieldContext, open, seal } from './personal-crypto.js';

describe('resolvePersonalDataRule', () => {
  it('gives a rule its default replacement', () => {
    expect(resolvePersonalDataRule('T', { subject: '/id', fields: ['/email'] }, 'r')).toEqual({
      subject: '/id',
      fields: ['/email'],
      replacement: {},
    });
  });

  it.each([
    [{ subject: 'id', fields: ['/email'] }, 'subject'],
    [{ subject: '/id', fields: [] }, 'fields'],
    [{ subject: '/id', fields: ['/id'] }, 'holds the subject'],
    [{ subject: '/a/id', fields: ['/a'] }, 'holds the subject'],
    [{ subject: '/id', fields: ['/a', '/a/b'] }, 'inside another field'],
    [{ subject: '/id', fields: ['/email'], replacement: { '/other': 1 } }, 'not one of the fields'],
    [{ subject: '/id', fields: ['/email'], extra: true }, 'unknown member'],
  ])('refuses %j, naming the problem', (raw, problem) => {
    expect(() => resolvePersonalDataRule('T', raw, 'rule of T')).toThrow(
      InvalidPersonalDataRuleError,
    );
    expect(() => resolvePersonalDataRule('T', raw, 'rule of T')).toThrow(problem);
  });

  it.each(['StartMarker', '$subject-erased', '$stream-deleted', '$audit.read'])(
    'refuses a rule for %s, a type Ordinal writes itself, naming it',
    (type) => {
      const raw = { subject: '/customerId', fields: ['/email'] };
      expect(() => resolvePersonalDataRule(type, raw, 'r')).toThrow(InvalidPersonalDataRuleError);
      expect(() => resolvePersonalDataRule(type, raw, 'r')).toThrow(
        `${type} is a message type Ordinal writes itself`,
      );
    },
  );
});

describe('JSON pointers (RFC 6901)', () => {
  it('reads and replaces in place, keeping the member’s place; escapes ~0 and ~1', () => {
    const doc = { a: { 'b/c': 1, 'd~e': [10, 20] }, z: 2 };
    expect(valueAt(doc, '/a/b~1c')).toBe(1);
    expect(valueAt(doc, '/a/d~0e/1')).toBe(20);
    expect(valueAt(doc, '/missing')).toBeUndefined();
    expect(replaceAt(doc, '/a/b~1c', null)).toBe(true);
    expect(replaceAt(doc, '/nope/x', 1)).toBe(false);
    expect(JSON.stringify(doc)).toBe('{"a":{"b/c":null,"d~e":[10,20]},"z":2}');
  });

  it('replaces into a copy, leaving the caller’s document and the untouched branches as they are', () => {
    const doc = { a: { email: 'x', keep: [1] }, z: { deep: true } };
    const copy = withValueAt(doc, '/a/email', null) as typeof doc;
    expect(JSON.stringify(copy)).toBe('{"a":{"email":null,"keep":[1]},"z":{"deep":true}}');
    expect(doc.a.email).toBe('x');
    expect(copy.z).toBe(doc.z);
    expect(withValueAt(doc, '/missing/x', 1)).toBe(doc);
  });
});

describe('sealing with AES-256-GCM', () => {
  it('opens with the key and context it was sealed with, and refuses anything else', () => {
    const key = randomBytes(32);
    const box = seal(key, Buffer.from('"a@example.com"'), fieldContext('s1', '/email'));
    expect(open(key, box, fieldContext('s1', '/email')).toString()).toBe('"a@example.com"');
    // Another key, another subject, a flipped byte: GCM refuses, never garbage
    expect(() => open(randomBytes(32), box, fieldContext('s1', '/email'))).toThrow();
    expect(() => open(key, box, fieldContext('s2', '/email'))).toThrow();
    const flipped = Buffer.from(box);
    flipped[flipped.length - 1] ^= 1;
    expect(() => open(key, flipped, fieldContext('s1', '/email'))).toThrow();
  });
});
