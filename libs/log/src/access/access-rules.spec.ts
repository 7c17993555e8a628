import { AccessRuleError } from './access-rule.js';
import { AccessRules } from './access-rules.js';

const billing = { kind: 'jwt' as const, name: 'bob', groups: ['billing'] };
const ingest = { kind: 'token' as const, name: 'ingest', groups: [] };
const stranger = { kind: 'jwt' as const, name: 'eve', groups: [] };

const rules = new AccessRules([
  { principal: 'group:billing', allow: ['read'], categories: ['invoice-*', 'payment'] },
  { principal: 'jwt:bob', allow: ['write'], categories: ['invoice-*'], types: ['Invoice*'] },
  { principal: 'token:ingest', allow: ['read', 'write'] },
]);

describe('AccessRules', () => {
  it('allows everything when no rule is configured', () => {
    const open = new AccessRules([]);
    expect(open.open).toBe(true);
    expect(open.allows(stranger, 'write', { streamId: 'x-1', messageType: 'T' })).toBe(true);
  });

  it.each([
    // principal, action, stream, type, allowed
    [billing, 'read', 'invoice-1', 'InvoiceIssued', true],
    [billing, 'read', 'payment-9', 'PaymentTaken', true],
    [billing, 'read', 'employee-3', 'Hired', false],
    [billing, 'read', null, 'Loose', false],
    [billing, 'write', 'invoice-1', 'InvoiceIssued', true],
    [billing, 'write', 'invoice-1', 'Refund', false],
    [billing, 'write', 'payment-9', 'InvoiceIssued', false],
    [ingest, 'write', 'employee-3', 'Hired', true],
    [ingest, 'read', null, 'Loose', true],
    [stranger, 'read', 'invoice-1', 'InvoiceIssued', false],
  ] as const)('%o %s %s %s → %s', (principal, action, streamId, messageType, allowed) => {
    expect(rules.allows(principal, action, { streamId, messageType })).toBe(allowed);
  });

  it('says whether a whole source is covered (consumer groups)', () => {
    expect(rules.coversSource(billing, 'read', { category: 'invoice' })).toBe(true);
    expect(rules.coversSource(billing, 'read', { category: 'employee' })).toBe(false);
    expect(rules.coversSource(billing, 'read', { types: ['InvoiceIssued'] })).toBe(false);
    expect(rules.coversSource(ingest, 'read', {})).toBe(true);
  });

  it('gives the categories it covers whole as LIKE patterns that agree with coversSource', () => {
    // A LIKE pattern (escape \\) as the anchored RegExp PostgreSQL's LIKE amounts to
    const likeRegExp = (like: string) => {
      let body = '';
      for (let i = 0; i < like.length; i++) {
        const escaped = like[i] === '\\';
        const c = escaped ? like[++i] : like[i];
        if (!escaped && c === '%') body += '.*';
        else if (!escaped && c === '_') body += '.';
        else body += c.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');
      }
      return new RegExp(`^${body}$`, 's');
    };
    const tricky = new AccessRules([
      { principal: 'group:billing', allow: ['read'], categories: ['invoice-*', 'pay_ment'] },
      { principal: 'group:billing', allow: ['read'], categories: ['ord?r*', '100%'] },
      { principal: 'group:billing', allow: ['read'], categories: ['hr-*'], types: ['Hired'] },
    ]);
    const patterns = tricky.categoryPatterns(billing, 'read')!;
    for (const category of [
      'invoice',
      'invoices',
      'pay_ment',
      'payXment',
      'order',
      'ordXr',
      'orderly',
      'ord',
      '100%',
      '100x',
      'hr',
      'employee',
      '$audit',
    ]) {
      const listed = patterns.some((p) => likeRegExp(p).test(category));
      expect({ category, listed }).toEqual({
        category,
        listed: tricky.coversSource(billing, 'read', { category }),
      });
    }
    // Every category, and none
    expect(rules.categoryPatterns(ingest, 'read')).toBeNull();
    expect(rules.categoryPatterns(stranger, 'read')).toEqual([]);
  });

  it('refuses a malformed rule, naming it', () => {
    expect(() => new AccessRules([{ principal: 'user:x', allow: ['read'] }])).toThrow(
      AccessRuleError,
    );
    expect(() => new AccessRules([{ principal: '*', allow: ['delete' as 'read'] }])).toThrow(
      /rules\[0\]\.allow/,
    );
    expect(() => new AccessRules([{ principal: '*', allow: ['read'], types: [] }])).toThrow(
      /rules\[0\]\.types/,
    );
  });
});

describe('AccessRules, decisions remembered per category and type', () => {
  it('gives the same answers as the patterns, for category-form and other globs', () => {
    const mixed = new AccessRules([
      { principal: '*', allow: ['read'], categories: ['invoice-*'], types: ['A*'] },
      { principal: 'token:x', allow: ['read'], categories: ['pay*-1?'] },
    ]);
    const x = { kind: 'token' as const, name: 'x', groups: [] };
    const y = { kind: 'token' as const, name: 'y', groups: [] };
    for (let round = 0; round < 2; round++) {
      expect(mixed.allows(y, 'read', { streamId: 'invoice-1', messageType: 'Ab' })).toBe(true);
      expect(mixed.allows(y, 'read', { streamId: 'invoice-2', messageType: 'Bb' })).toBe(false);
      expect(mixed.allows(y, 'read', { streamId: 'payment-11', messageType: 'Ab' })).toBe(false);
      expect(mixed.allows(x, 'read', { streamId: 'payment-11', messageType: 'Zz' })).toBe(true);
      expect(mixed.allows(x, 'read', { streamId: 'payment-1', messageType: 'Zz' })).toBe(false);
    }
  });
});
