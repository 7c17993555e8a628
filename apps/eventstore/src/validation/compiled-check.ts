import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';

/** Says `true` only when class-validator would find no error in the instance; `false` means "ask class-validator". */
export type CompiledCheck = (instance: Record<string, unknown>) => boolean;

interface Rule {
  property: string;
  constraints: unknown[];
  validate: (value: unknown, args: ValidationArguments) => unknown;
}

interface PropertyRules {
  property: string;
  /** IsOptional and ValidateIf: when one says no, the property is not validated at all. */
  conditions: ((object: object, value: unknown) => boolean)[];
  /** Every other constraint (IsDefined included); all must pass, so their order does not matter. */
  rules: Rule[];
}

const SUPPORTED = new Set<string>([ValidationTypes.CUSTOM_VALIDATION, ValidationTypes.CONDITIONAL_VALIDATION, ValidationTypes.IS_DEFINED]);

/**
 * The request path's validation without class-validator's executor: the same constraint
 * instances, called with the same arguments, in the same order, but no error objects, no
 * per-call metadata grouping and no filtering — which was most of what validating a message
 * cost. It only ever answers "valid"; any failure, and anything it does not model (nested
 * DTOs, `each`, groups, `always`, async or conditional-per-rule constraints), goes to
 * class-validator, which then writes the error message. A DTO with any such rule gets no
 * compiled check at all (`null`).
 */
export function compileCheck(metatype: Function): CompiledCheck | null {
  const storage = getMetadataStorage();
  // As ValidationExecutor asks for them with the pipe's options: no groups, always off.
  const metadatas = storage.getTargetValidationMetadatas(metatype, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  const byProperty = new Map<string, PropertyRules>();
  for (const m of metadatas) {
    if (!SUPPORTED.has(m.type) || m.each || m.always !== undefined || (m.groups && m.groups.length > 0) || m.validateIf) return null;
    let entry = byProperty.get(m.propertyName);
    if (!entry) byProperty.set(m.propertyName, (entry = { property: m.propertyName, conditions: [], rules: [] }));
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      entry.conditions.push(m.constraints[0] as (object: object, value: unknown) => boolean);
      continue;
    }
    for (const constraint of storage.getTargetValidatorConstraints(m.constraintCls)) {
      if (constraint.async) return null;
      const instance = constraint.instance as { validate: Rule['validate'] };
      entry.rules.push({ property: m.propertyName, constraints: m.constraints, validate: instance.validate.bind(instance) });
    }
  }
  const properties = [...byProperty.values()];
  const targetName = metatype.name;

  return (instance) => {
    for (const { property, conditions, rules } of properties) {
      const value = instance[property];
      if (!conditions.every((condition) => condition(instance, value))) continue;
      for (const rule of rules) {
        const valid = rule.validate(value, { targetName, property, object: instance, value, constraints: rule.constraints });
        if (!valid || typeof (valid as { then?: unknown }).then === 'function') return false;
      }
    }
    return true;
  };
}
