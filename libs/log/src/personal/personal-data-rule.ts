import { InvalidPersonalDataRuleError } from '../errors/index.js';
import { MESSAGE_FIELD_RULES } from '../import/import-line.js';
import { START_MARKER_TYPE } from '../log.constants.js';
import { pointerTokens } from './json-pointer.js';

/**
 * Which fields of a message type are personal data, and whose (docs/personal-data.md):
 * `{subject: '/customerId', fields: ['/email', '/address'], replacement: {'/email': null}}`.
 * Every pointer is an RFC 6901 JSON pointer into the message's body.
 */
export interface PersonalDataRule {
  /** Where the body names the subject (a string or a number): the person the fields belong to. */
  subject: string;
  /** The personal fields, sealed under the subject's key. */
  fields: string[];
  /** What a reader without the clear value gets at each field. @default null for every field */
  replacement?: Record<string, unknown>;
}

/**
 * Whether Ordinal itself writes messages of the type: the marker of every start and the `$`
 * types (`$subject-erased`, `$stream-deleted`, `$audit.*`, …). Such a type takes no rule: its
 * bodies name no subject, so a rule would refuse Ordinal's own appends.
 */
export function isOrdinalMessageType(messageType: string): boolean {
  return messageType === START_MARKER_TYPE || messageType.startsWith('$');
}

/**
 * Checks the rule of a message type from outside (REST, the rules file, the module's options, a
 * decorator); returns it with its defaults. Refuses a type Ordinal writes itself.
 */
export function resolvePersonalDataRule(
  messageType: string,
  raw: unknown,
  where: string,
): Required<PersonalDataRule> {
  const fail = (problem: string) =>
    new InvalidPersonalDataRuleError(`${where}: ${problem} (docs/personal-data.md)`);
  if (isOrdinalMessageType(messageType))
    throw fail(`${messageType} is a message type Ordinal writes itself; it takes no rule`);
  if (!MESSAGE_FIELD_RULES.messageTypePattern.test(messageType))
    throw fail(`the message type ${messageType} is not 1-200 characters of [A-Za-z0-9._:-]`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw fail('a rule is an object {subject, fields, replacement?}');
  const rule = raw as Partial<PersonalDataRule> & Record<string, unknown>;
  const extra = Object.keys(rule).filter((k) => !['subject', 'fields', 'replacement'].includes(k));
  if (extra.length > 0) throw fail(`unknown member ${extra.join(', ')}`);
  const pointer = (value: unknown, name: string): string => {
    if (typeof value !== 'string' || value === '') throw fail(`${name} must be a JSON pointer`);
    try {
      pointerTokens(value);
    } catch (error) {
      throw fail(`${name}: ${(error as Error).message}`);
    }
    return value;
  };
  const subject = pointer(rule.subject, 'subject');
  if (!Array.isArray(rule.fields) || rule.fields.length === 0)
    throw fail('fields must be a non-empty list of JSON pointers');
  const fields = rule.fields.map((f, i) => pointer(f, `fields[${i}]`));
  if (new Set(fields).size !== fields.length) throw fail('fields names a pointer twice');
  const overlapping = fields.find((f) => f === subject || subject.startsWith(`${f}/`));
  if (overlapping) throw fail(`field ${overlapping} holds the subject, which must stay readable`);
  const nested = fields.find((f) => fields.some((g) => g !== f && f.startsWith(`${g}/`)));
  if (nested) throw fail(`field ${nested} lies inside another field`);
  const replacement = rule.replacement ?? {};
  if (typeof replacement !== 'object' || replacement === null || Array.isArray(replacement))
    throw fail('replacement must be an object of pointer → value');
  const stray = Object.keys(replacement).find((k) => !fields.includes(k));
  if (stray) throw fail(`replacement names ${stray}, which is not one of the fields`);
  return { subject, fields, replacement };
}
