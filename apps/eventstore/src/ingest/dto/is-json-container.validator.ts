import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** A JSON object or array that PostgreSQL's jsonb can store (no NUL characters). */
export function IsJsonContainer(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isJsonContainer',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate(value: unknown) {
          if (value === null || typeof value !== 'object') return false;
          return !JSON.stringify(value).includes('\\u0000');
        },
        defaultMessage(args: ValidationArguments) {
          return `${args.property} must be a JSON object or array without NUL characters`;
        },
      },
    });
}
