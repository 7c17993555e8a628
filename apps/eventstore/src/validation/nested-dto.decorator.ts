import { ValidateNested } from 'class-validator';

const NESTED_DTO = Symbol('ordinal:nested-dto');

/** A DTO class. */
export type DtoClass = new (...args: never[]) => object;

/**
 * An array of nested DTOs (`messages`, `events`): validated element by element, each element
 * given the DTO's prototype by DtoValidationPipe. Replaces class-transformer's `@Type`, whose
 * copy of the body walked into content and failed on a `constructor` key there.
 */
export function NestedDtos(type: () => DtoClass): PropertyDecorator {
  return (target: object, property: string | symbol) => {
    ValidateNested({ each: true })(target, property);
    Reflect.defineMetadata(NESTED_DTO, type, target, property);
  };
}

/** The DTO class of a property marked `@NestedDtos`, or undefined. */
export function nestedDtoOf(metatype: DtoClass, property: string): DtoClass | undefined {
  const type = Reflect.getMetadata(NESTED_DTO, metatype.prototype as object, property) as
    (() => DtoClass) | undefined;
  return type?.();
}
