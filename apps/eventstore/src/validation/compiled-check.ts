import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import { nestedDtoOf, type DtoClass } from './nested-dto.decorator.js';

/** Says `true` only when class-validator would find no error in the instance; `false` means "ask class-validator". */
export type CompiledCheck = (instance: Record<string, unknown>) => boolean;

interface Rule {
  property: string;
  constraints: unknown[];
  validate: (value: unknown, args: ValidationArguments) => unknown;
  /** `each`: an array's every element is validated (the arguments' value is the array), anything else as itself. */
  each: boolean;
}

interface PropertyRules {
  property: string;
  /** IsOptional and ValidateIf: when one says no, the property is not validated at all. */
  conditions: ((object: object, value: unknown) => boolean)[];
  /** Every other constraint (IsDefined included); all must pass, so their order does not matter. */
  rules: Rule[];
}

const SUPPORTED = new Set<string>([
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.CONDITIONAL_VALIDATION,
  ValidationTypes.IS_DEFINED,
]);

/**
 * The request path's validation without class-validator's executor: the same constraint
 * instances, called with the same arguments, in the same order, but no error objects, no
 * per-call metadata grouping and no filtering — which was most of what validating a message
 * cost. It only ever answers "valid"; any failure, and anything it does not model (nested
 * DTOs other than `@NestedDtos` arrays, `each` over a Set or Map, groups, `always`, async or conditional-per-rule constraints), goes to
 * class-validator, which then writes the error message. A DTO with any such rule gets no
 * compiled check at all (`null`).
 */
export function compileCheck(metatype: DtoClass): CompiledCheck | null {
  const storage = getMetadataStorage();
  // As ValidationExecutor asks for them with the pipe's options: no groups, always off.
  const metadatas = storage.getTargetValidationMetadatas(metatype, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  const byProperty = new Map<string, PropertyRules>();
  for (const m of metadatas) {
    if (m.type === ValidationTypes.NESTED_VALIDATION) {
      const rule = nestedRule(metatype, m.propertyName, m.each, m.always, m.groups);
      if (!rule) return null;
      let entry = byProperty.get(m.propertyName);
      if (!entry)
        byProperty.set(
          m.propertyName,
          (entry = { property: m.propertyName, conditions: [], rules: [] }),
        );
      entry.rules.push(rule);
      continue;
    }
    if (
      !SUPPORTED.has(m.type) ||
      m.always !== undefined ||
      (m.groups && m.groups.length > 0) ||
      m.validateIf
    )
      return null;
    let entry = byProperty.get(m.propertyName);
    if (!entry)
      byProperty.set(
        m.propertyName,
        (entry = { property: m.propertyName, conditions: [], rules: [] }),
      );
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      entry.conditions.push(m.constraints[0] as (object: object, value: unknown) => boolean);
      continue;
    }
    for (const constraint of storage.getTargetValidatorConstraints(m.constraintCls)) {
      if (constraint.async) return null;
      const instance = constraint.instance as { validate: Rule['validate'] };
      entry.rules.push({
        property: m.propertyName,
        constraints: m.constraints,
        validate: instance.validate.bind(instance),
        each: m.each,
      });
    }
  }
  const properties = [...byProperty.values()];
  const targetName = metatype.name;

  return (instance) => {
    for (const { property, conditions, rules } of properties) {
      const value = instance[property];
      if (!conditions.every((condition) => condition(instance, value))) continue;
      for (const rule of rules) {
        const args = {
          targetName,
          property,
          object: instance,
          value,
          constraints: rule.constraints,
        };
        if (rule.each && Array.isArray(value)) {
          // As class-validator: each element, with the array as the arguments' value.
          for (const element of value as unknown[])
            if (!passes(rule.validate(element, args))) return false;
          continue;
        }
        // A Set or Map under `each`: class-validator's, element by element.
        if (rule.each && (value instanceof Set || value instanceof Map)) return false;
        if (!passes(rule.validate(value, args))) return false;
      }
    }
    return true;
  };
}

/** A constraint's answer that counts as valid here: truthy and not a promise (async is class-validator's). */
function passes(valid: unknown): boolean {
  return Boolean(valid) && typeof (valid as { then?: unknown }).then !== 'function';
}

/**
 * A `@NestedDtos` array (ValidateNested with `each`): valid when every element is an instance
 * of the nested DTO (DtoValidationPipe gives plain objects its prototype) that passes the
 * nested DTO's own compiled check. Anything else — a non-object element, an array, a nested
 * DTO the compiler cannot model — is left to class-validator. Null when not modelled.
 */
function nestedRule(
  metatype: DtoClass,
  property: string,
  each: boolean,
  always: boolean | undefined,
  groups: string[] | undefined,
): Rule | null {
  if (!each || always !== undefined || (groups && groups.length > 0)) return null;
  const nested = nestedDtoOf(metatype, property);
  const check = nested ? compileCheck(nested) : null;
  if (!nested || !check) return null;
  const prototype = nested.prototype as object;
  return {
    property,
    constraints: [],
    each: false,
    validate: (value) => {
      if (!Array.isArray(value)) return false;
      for (const element of value) {
        if (
          element === null ||
          typeof element !== 'object' ||
          Object.getPrototypeOf(element) !== prototype
        )
          return false;
        if (!check(element as Record<string, unknown>)) return false;
      }
      return true;
    },
  };
}
