import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';

function flatten(errors: ValidationError[], prefix = ''): { field: string; problems: string[] }[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, problems: Object.values(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

/** class-validator DTOs; a 400 whose message names every bad field by its path. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: false,
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const fields = flatten(errors);
      const message = fields.map((f) => `${f.field}: ${f.problems.join(', ')}`).join('; ');
      return new BadRequestException({ message: message || 'Invalid request body', fields });
    },
  });
}
