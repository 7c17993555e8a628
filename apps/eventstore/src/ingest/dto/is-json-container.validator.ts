import {
  registerDecorator,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';

/**
 * A JSON object or array. Content jsonb cannot store (a NUL character) is refused by the
 * log's writer with InvalidMessageError (400) when it serialises the message, so the body
 * is not stringified twice on the request path.
 */
export function IsJsonContainer(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isJsonContainer',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate(value: unknown) {
          return value !== null && typeof value === 'object';
        },
        defaultMessage(args: ValidationArguments) {
          return `${args.property} must be a JSON object or array`;
        },
      },
    });
}
