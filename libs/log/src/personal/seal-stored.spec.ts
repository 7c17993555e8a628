import type { SealedFields } from '../message.js';
import { fieldContext, newDataKey, open, seal, subjectHash } from './personal-crypto.js';
import { resolvePersonalDataRule } from './personal-data-rule.js';
import {
  finishStoredSeal,
  planStoredSeal,
  type StoredRow,
  type StoredSeal,
} from './seal-stored.js';

const rule = resolvePersonalDataRule(
  'T',
  { subject: '/customerId', fields: ['/email', '/address'], replacement: { '/email': 'x' } },
  'test',
);
const key = newDataKey();

/** Plans and seals a row that has something to seal. */
function sealRow(row: StoredRow, with_: Buffer | 'erased'): StoredSeal {
  const planned = planStoredSeal(rule, 'T', row);
  if (planned.outcome !== 'plan') throw new Error(`nothing planned: ${planned.outcome}`);
  return finishStoredSeal(planned, row, with_);
}

/** The clear values of a rewritten row's box, opened under `key`. */
function opened(result: StoredSeal): unknown[] {
  if (result.outcome !== 'rewrite') throw new Error(`not rewritten: ${result.outcome}`);
  const { subject, fields, sealed } = result.personal;
  const box = Buffer.from(sealed, 'base64');
  return JSON.parse(
    open(key, box, fieldContext(subject, fields.join(','))).toString(),
  ) as unknown[];
}

describe('sealing a stored row in place', () => {
  it('seals a legacy row as an append would: replacements in the body, values in the box', () => {
    // Given a row stored in clear before the rule
    const row = { body: { customerId: 'c-1', email: 'a@b.example', plan: 'gold' }, personal: null };
    // When it is sealed
    const result = sealRow(row, key);
    // Then the body holds the replacement, the box the clear value, under the subject's hash
    expect(result).toMatchObject({
      outcome: 'rewrite',
      erased: false,
      body: { customerId: 'c-1', email: 'x', plan: 'gold' },
      personal: { subject: subjectHash('c-1'), fields: ['/email'] },
    });
    expect(opened(result)).toEqual(['a@b.example']);
    expect(row.body.email).toBe('a@b.example');
  });

  it('leaves rows without personal fields, sealed rows and rows without a subject alone', () => {
    expect(planStoredSeal(rule, 'T', { body: { customerId: 'c-1' }, personal: null })).toEqual({
      outcome: 'nothing',
    });
    const sealedRow = {
      body: { customerId: 'c-1', email: 'x' },
      personal: { subject: subjectHash('c-1'), fields: ['/email'], sealed: 'AQ==' },
    };
    expect(planStoredSeal(rule, 'T', sealedRow)).toEqual({ outcome: 'sealed' });
    const orphan = planStoredSeal(rule, 'T', { body: { email: 'a@b.example' }, personal: null });
    expect(orphan).toMatchObject({ outcome: 'unredactable' });
    expect((orphan as { reason: string }).reason).toContain('/customerId');
  });

  it('adds the fields a widened rule names to a row sealed under the narrower one', () => {
    // Given a row sealed for /email only, its /address still in clear
    const subject = subjectHash('c-1');
    const box = seal(
      key,
      Buffer.from(JSON.stringify(['a@b.example'])),
      fieldContext(subject, '/email'),
    );
    const personal: SealedFields = { subject, fields: ['/email'], sealed: box.toString('base64') };
    const row = { body: { customerId: 'c-1', email: 'x', address: { city: 'Lyon' } }, personal };
    // When it is sealed under the rule naming both
    const result = sealRow(row, key);
    // Then one box holds both values, the body both replacements
    expect(result).toMatchObject({
      body: { customerId: 'c-1', email: 'x', address: null },
      personal: { subject, fields: ['/email', '/address'] },
    });
    expect(opened(result)).toEqual(['a@b.example', { city: 'Lyon' }]);
  });

  it('replaces an erased subject’s fields under a throwaway key: the box never opens', () => {
    const row = { body: { customerId: 'c-9', email: 'gone@b.example' }, personal: null };
    const result = sealRow(row, 'erased');
    expect(result).toMatchObject({ outcome: 'rewrite', erased: true, body: { email: 'x' } });
    expect(JSON.stringify(result)).not.toContain('gone@b.example');
    expect(() => opened(result)).toThrow();
  });
});
