import { toCanonicalJson } from '@ordinal/pg';
import { contentHash } from '../content-hash.js';
import type { SealedFields } from '../message.js';
import { valueAt } from './json-pointer.js';
import type { PersonalDataRule } from './personal-data-rule.js';
import { fieldContext, newDataKey, open, seal, subjectHash } from './personal-crypto.js';
import { planSeal, type SealPlan } from './seal-plan.js';

/** A stored row of a ruled type, as a redaction reads it. */
export interface StoredRow {
  body: unknown;
  personal: SealedFields | null;
  /** The row's tenant: its subject is the tenant's own (`tenantSubjectHash`). */
  tenant?: string | null;
}

/** What sealing a stored row in place comes to (docs/personal-data.md#legacy-data-in-clear). */
export type StoredSeal =
  /** Every personal field the rule names and the body holds is sealed already: untouched. */
  | { outcome: 'sealed' }
  /** No personal field in the body (and none sealed): untouched. */
  | { outcome: 'nothing' }
  /** Cannot be sealed (its subject is missing, say): untouched, and still in clear. */
  | { outcome: 'unredactable'; reason: string }
  /**
   * The row as an append under the rule would have stored it: the body with the replacements,
   * the sealed fields, the content hash of both. `erased`: its subject was erased, so the box
   * is sealed under a throwaway key (it never opens, like every box of an erased subject).
   */
  | {
      outcome: 'rewrite';
      erased: boolean;
      body: unknown;
      personal: SealedFields;
      contentHash: string;
    };

/** A row to rewrite, planned: the fields to add and the subject (hash) whose key seals them. */
export interface PlannedStoredSeal {
  outcome: 'plan';
  plan: SealPlan;
  subject: string;
}

/**
 * The first, key-free half of sealing a stored row: which of the rule's fields it still holds
 * in clear. A row sealed under an older, narrower rule is planned for the fields the rule
 * added since; its subject stays the one it was sealed for.
 */
export function planStoredSeal(
  rule: Required<PersonalDataRule>,
  messageType: string,
  row: StoredRow,
): StoredSeal | PlannedStoredSeal {
  const sealed = row.personal?.fields ?? [];
  const clear = (pointer: string) => !sealed.includes(pointer);
  if (!rule.fields.some((p) => clear(p) && valueAt(row.body, p) !== undefined))
    return { outcome: row.personal ? 'sealed' : 'nothing' };
  const plan = planSeal(rule, messageType, row.body, clear);
  if ('problem' in plan) return { outcome: 'unredactable', reason: plan.message };
  return {
    outcome: 'plan',
    plan,
    subject: row.personal?.subject ?? subjectHash(plan.subjectId, row.tenant),
  };
}

/**
 * The second half: seals the planned fields (with those the row had sealed, opened first)
 * under the subject's key, or under a throwaway key when the subject was erased.
 */
export function finishStoredSeal(
  planned: PlannedStoredSeal,
  row: StoredRow,
  key: Buffer | 'erased',
): StoredSeal {
  const { plan, subject } = planned;
  let fields = plan.fields;
  let values = plan.values;
  if (row.personal && key !== 'erased') {
    const context = fieldContext(subject, row.personal.fields.join(','));
    let before: Buffer;
    try {
      before = open(key, Buffer.from(row.personal.sealed, 'base64'), context);
    } catch {
      return {
        outcome: 'unredactable',
        reason: `its sealed fields ${row.personal.fields.join(', ')} do not open under their subject's key`,
      };
    }
    fields = [...row.personal.fields, ...fields];
    values = [...(JSON.parse(before.toString('utf8')) as unknown[]), ...values];
  } else if (row.personal) fields = [...row.personal.fields, ...fields];
  const boxKey = key === 'erased' ? newDataKey() : key;
  const box = seal(
    boxKey,
    Buffer.from(JSON.stringify(values)),
    fieldContext(subject, fields.join(',')),
  );
  const sealedText = box.toString('base64');
  const canonical = toCanonicalJson(plan.body, 'content');
  if (typeof canonical !== 'string')
    return { outcome: 'unredactable', reason: `${canonical.path} ${canonical.reason}` };
  return {
    outcome: 'rewrite',
    erased: key === 'erased',
    body: plan.body,
    personal: { subject, fields, sealed: sealedText },
    // As the writer hashes a sealed message: the stored body and the box (docs/personal-data.md).
    contentHash: contentHash(`${canonical}\n${sealedText}`),
  };
}
