import { OrdinalError } from '../errors/ordinal.error.js';

/** How a numeric module option is checked where its default is applied. */
export interface NumberOptionRule {
  /** The option's path as a user writes it, e.g. `log.takeoverMs`. */
  option: string;
  /** The server's environment variable that sets it, named in the error. */
  env?: string;
  /** Its default, used when the option is left out. */
  fallback: number;
  /** The smallest value it accepts. @default Number.MIN_SAFE_INTEGER */
  min?: number;
  /** `ms` for a duration; anything else is a whole count. */
  unit?: 'ms' | 'count';
  /** How a user sets it. @default `OrdinalModule.forRoot({ <module>: { <key> } })` from `option` */
  setWith?: string;
}

/**
 * Applies an option's default and checks its bound, in the one place the option is resolved.
 * A value the module cannot run with (below the bound, not a whole number, or NaN from an
 * unset environment variable) fails the start with `invalid_configuration`, naming the option,
 * what it accepts and how to set it.
 */
export function numberOption(value: number | undefined, rule: NumberOptionRule): number {
  if (value === undefined) return rule.fallback;
  const min = rule.min ?? Number.MIN_SAFE_INTEGER;
  if (Number.isInteger(value) && value >= min) return value;
  const what = rule.unit === 'ms' ? 'a number of milliseconds' : 'a whole number';
  const bound = min === Number.MIN_SAFE_INTEGER ? '' : ` of at least ${min}`;
  const [module, key] = rule.option.split('.');
  const setWith = rule.setWith ?? `OrdinalModule.forRoot({ ${module}: { ${key} } })`;
  const server = rule.env ? ` (the server: ${rule.env})` : '';
  throw new OrdinalError(
    'invalid_configuration',
    `${rule.option} must be ${what}${bound}, got ${value}: set ${setWith}${server}, or leave it out for ${rule.fallback}`,
  );
}
