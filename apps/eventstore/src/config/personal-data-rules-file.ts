import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { resolvePersonalDataRule, type PersonalDataRule } from '@ordinal/log';

/**
 * The personal-data rules of the YAML or JSON file named by ORDINAL_PERSONAL_DATA_RULES:
 * `{rules: {CustomerRegistered: {subject: /customerId, fields: [/email], replacement: {…}}}}`
 * (or the map alone), each as `PUT /api/personal-data/rules/:messageType` takes it. Checked at
 * start: a bad entry stops the start with a message naming it.
 */
export function loadPersonalDataRulesFile(
  path: string,
  error: (message: string) => Error = (message) => new Error(message),
): Record<string, PersonalDataRule> {
  const name = 'ORDINAL_PERSONAL_DATA_RULES';
  let raw: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (cause) {
    throw error(`${name}: cannot read ${path}: ${(cause as Error).message}`);
  }
  const map = (raw as { rules?: unknown } | null)?.rules ?? raw ?? {};
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw error(
      `${name}: ${path} must be {"rules": {"<messageType>": {subject, fields, replacement?}}}`,
    );
  const rules: Record<string, PersonalDataRule> = {};
  for (const [type, rule] of Object.entries(map as Record<string, unknown>)) {
    try {
      rules[type] = resolvePersonalDataRule(type, rule, `${name}: ${path}: rules.${type}`);
    } catch (cause) {
      throw error((cause as Error).message);
    }
  }
  return rules;
}
