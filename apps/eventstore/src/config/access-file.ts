import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { AccessRuleError, AccessRules, type AccessRule } from '@ordinal/log';

/** The access part of the configuration (docs/security.md). */
export interface AccessConfig {
  /** The rules of the file named by ORDINAL_ACCESS_RULES. @default [] (scopes alone decide) */
  rules: AccessRule[];
  /** Write the audit trail (`$audit-*`): admin operations, denials, audited reads (ORDINAL_AUDIT=on). @default false */
  audit: boolean;
  /** Categories whose reads are audited (`audited:` in the rules file; needs ORDINAL_AUDIT=on). @default [] */
  auditedCategories: string[];
}

/**
 * The access rules of the JSON or YAML file named by ORDINAL_ACCESS_RULES:
 * `{rules: [{principal, allow, categories?, types?}], audited: [category, …]}`. Checked at
 * start: a bad rule stops the start with a message naming it.
 */
export function loadAccessFile(
  path: string,
  error: (message: string) => Error,
): Pick<AccessConfig, 'rules' | 'auditedCategories'> {
  let raw: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (cause) {
    throw error(`ORDINAL_ACCESS_RULES: cannot read ${path}: ${(cause as Error).message}`);
  }
  const file = (raw ?? {}) as { rules?: unknown; audited?: unknown };
  if (typeof file !== 'object' || Array.isArray(file) || !Array.isArray(file.rules ?? []))
    throw error(`ORDINAL_ACCESS_RULES: ${path} must be {"rules": [...], "audited": [...]}`);
  const rules = (file.rules ?? []) as AccessRule[];
  try {
    new AccessRules(rules);
  } catch (cause) {
    if (cause instanceof AccessRuleError)
      throw error(`ORDINAL_ACCESS_RULES: ${path}: ${cause.message}`);
    throw cause;
  }
  const audited = file.audited ?? [];
  if (!Array.isArray(audited) || audited.some((c) => typeof c !== 'string' || c === ''))
    throw error(`ORDINAL_ACCESS_RULES: ${path}: audited must be a list of categories`);
  return { rules, auditedCategories: audited as string[] };
}
