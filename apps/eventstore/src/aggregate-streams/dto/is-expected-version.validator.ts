import { registerDecorator, type ValidationOptions } from 'class-validator';

/** An expected version: a JSON integer >= 0 (0 = the stream must not exist), `"any"`, `"no_stream"` or `"stream_exists"`. */
export function IsExpectedVersion(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isExpectedVersion',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) =>
          value === 'any' ||
          value === 'no_stream' ||
          value === 'stream_exists' ||
          (Number.isSafeInteger(value) && (value as number) >= 0),
        defaultMessage: () =>
          'expectedVersion must be an integer >= 0 (0 = new stream), "any", "no_stream" or "stream_exists"',
      },
    });
}
