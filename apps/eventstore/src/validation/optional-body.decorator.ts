import type { DtoClass } from './nested-dto.decorator.js';

const OPTIONAL_BODY = new WeakSet<object>();

/**
 * A request body that may be left out altogether (no content): DtoValidationPipe then passes
 * `undefined` on and the handler applies its defaults. A body that is sent is validated as
 * any other; every field of such a DTO is optional.
 */
export function OptionalBody(): ClassDecorator {
  return (target) => {
    OPTIONAL_BODY.add(target);
  };
}

/** Whether the DTO is marked `@OptionalBody()`. */
export function isOptionalBody(metatype: DtoClass): boolean {
  return OPTIONAL_BODY.has(metatype);
}
