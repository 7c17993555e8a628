import { toStorableJson } from '@ordinal/pg';
import type { PersonalDataRule } from './personal-data-rule.js';
import { valueAt, withValueAt } from './json-pointer.js';

/** What sealing one body under its rule does, before any key is touched. */
export interface SealPlan {
  /** The subject id as the body names it (a non-empty string or a number), as text. */
  subjectId: string;
  /** The body with each present personal field replaced by its replacement (a copy). */
  body: unknown;
  /** The present personal fields, in the rule's order. */
  fields: string[];
  /** Their clear values, in the same order. */
  values: unknown[];
}

/** Why a body cannot be sealed under its rule. */
export type SealProblem =
  { problem: 'subject'; message: string } | { problem: 'value'; message: string };

/**
 * Plans the sealing of a body under its rule (docs/personal-data.md): the subject id, the body
 * with the replacements, the clear values to seal. Pure: the writer's append and the legacy
 * redaction both use it, so a row rewritten in place is the row an append would have stored.
 * `only` restricts the planned fields (a redaction adding the fields a widened rule names).
 */
export function planSeal(
  rule: Required<PersonalDataRule>,
  messageType: string,
  body: unknown,
  only?: (pointer: string) => boolean,
): SealPlan | SealProblem {
  const id = valueAt(body, rule.subject);
  if ((typeof id !== 'string' || id === '') && typeof id !== 'number')
    return {
      problem: 'subject',
      message: `Message '${messageType}': its personal-data subject ${rule.subject} is missing (a non-empty string or a number is required by the rule of ${messageType})`,
    };
  let replaced = body;
  const fields: string[] = [];
  const values: unknown[] = [];
  for (const pointer of rule.fields) {
    if (only && !only(pointer)) continue;
    const value = valueAt(replaced, pointer);
    if (value === undefined) continue;
    // The body is checked whole when the writer prepares it (with the replacements in it);
    // each personal value is checked here, as the same rules would check it in place.
    const storable = toStorableJson(value, `content${pointer.replaceAll('/', '.')}`);
    if ('reason' in storable)
      return {
        problem: 'value',
        message: `Message '${messageType}': ${storable.path} ${storable.reason}`,
      };
    replaced = withValueAt(replaced, pointer, rule.replacement[pointer] ?? null);
    fields.push(pointer);
    values.push(storable.value);
  }
  return { subjectId: String(id), body: replaced, fields, values };
}
