import { BadRequestException, Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import { compileCheck, type CompiledCheck } from './compiled-check.js';

function flatten(errors: ValidationError[], prefix = ''): { field: string; problems: string[] }[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, problems: Object.values(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

type Metatype = new (...args: unknown[]) => object;
const PRIMITIVES = new Set<unknown>([String, Boolean, Number, Array, Object]);

/**
 * Validates request bodies against their class-validator DTOs; a 400 whose message names
 * every bad field by its path. It does what Nest's ValidationPipe (transform off) does, on
 * the request path's budget: a DTO without nested DTOs is validated as the parsed object
 * given the DTO's prototype (no class-transformer copy), synchronously; only DTOs with
 * nested DTOs go through plainToInstance. A DTO whose rules compileCheck can model is first
 * checked by that (the same constraints without class-validator's executor); class-validator
 * runs only when that check fails, to name the problems.
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform {
  private readonly nested = new Map<Function, boolean>();
  private readonly checks = new Map<Function, CompiledCheck | null>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const metatype = metadata.metatype as Metatype | undefined;
    if (metadata.type !== 'body' || !metatype || PRIMITIVES.has(metatype)) return value;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new BadRequestException({ message: 'The request body must be a JSON object', fields: [] });
    }
    const nested = this.hasNested(metatype);
    // An own `constructor` would replace the class class-validator looks its rules up by
    // (no rules found = no errors): no DTO has such a field, so it is refused outright.
    if (!nested && Object.hasOwn(value, 'constructor')) {
      throw new BadRequestException({ message: 'constructor: not a field of this request', fields: [{ field: 'constructor', problems: ['not a field of this request'] }] });
    }
    const instance = nested ? plainToInstance(metatype, value) : Object.assign(Object.create(metatype.prototype) as object, value);
    const check = this.checkOf(metatype);
    if (check?.(instance as Record<string, unknown>)) return value;
    const errors = validateSync(instance, { forbidUnknownValues: false, validationError: { target: false, value: false } });
    if (errors.length > 0) {
      const fields = flatten(errors);
      const message = fields.map((f) => `${f.field}: ${f.problems.join(', ')}`).join('; ');
      throw new BadRequestException({ message: message || 'Invalid request body', fields });
    }
    // The compiled check said no and class-validator found nothing to name: fail closed.
    if (check) throw new BadRequestException({ message: 'Invalid request body', fields: [] });
    return value;
  }

  private checkOf(metatype: Metatype): CompiledCheck | null {
    let check = this.checks.get(metatype);
    if (check === undefined) {
      check = this.hasNested(metatype) ? null : compileCheck(metatype);
      this.checks.set(metatype, check);
    }
    return check;
  }

  private hasNested(metatype: Metatype): boolean {
    let nested = this.nested.get(metatype);
    if (nested === undefined) {
      nested = getMetadataStorage()
        .getTargetValidationMetadatas(metatype, '', true, false)
        .some((m) => m.type === 'nestedValidation');
      this.nested.set(metatype, nested);
    }
    return nested;
  }
}
