import {
  BadRequestException,
  Injectable,
  type ArgumentMetadata,
  type PipeTransform,
} from '@nestjs/common';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import { compileCheck, type CompiledCheck } from './compiled-check.js';
import { nestedDtoOf } from './nested-dto.decorator.js';
import { isOptionalBody } from './optional-body.decorator.js';
import type { HttpErrorCode } from '@ordinal/contract';

function flatten(errors: ValidationError[], prefix = ''): { field: string; problems: string[] }[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, problems: Object.values(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

type Metatype = new (...args: unknown[]) => object;
const PRIMITIVES = new Set<unknown>([String, Boolean, Number, Array, Object]);

/** What the pipe knows of one DTO class, worked out once. */
interface DtoShape {
  /** The fields the DTO declares (every one carries at least one validation rule). */
  fields: Set<string>;
  /** Fields holding arrays of nested DTOs, and their class. */
  nested: Map<string, Metatype>;
  check: CompiledCheck | null;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Validates request bodies against their class-validator DTOs; a 400 whose message names
 * every bad field by its path. The body is never copied or transformed: each DTO object
 * (the body, and each element of a `@NestedDtos` array) becomes an instance by taking the
 * DTO's prototype over its declared fields only, so content (`content`, `data`, `state`,
 * `metadata`) is never walked by anything but the JSON rule, and a `constructor` or
 * `__proto__` key inside it is an ordinary key. A field the DTO does not declare is a 400
 * naming it (a typo such as `idempotency_key` must not silently turn a feature off). No body
 * at all is a 400 unless the DTO is marked `@OptionalBody()`. A DTO
 * whose rules compileCheck can model is checked by that first; class-validator runs only
 * when it fails, to name the problems.
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform {
  private readonly shapes = new Map<Metatype, DtoShape>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const metatype = metadata.metatype as Metatype | undefined;
    if (metadata.type !== 'body' || !metatype || PRIMITIVES.has(metatype)) return value;
    // No content at all: the defaults, where the DTO says the body may be left out.
    if (value === undefined && isOptionalBody(metatype)) return value;
    if (!isPlainObject(value))
      throw new BadRequestException({
        message: 'The request body must be a JSON object',
        fields: [],
      });
    const unknown: string[] = [];
    const notObjects: string[] = [];
    const instance = this.instantiate(metatype, value, '', unknown, notObjects);
    if (notObjects.length > 0) {
      // class-validator would pass an array there (it validates the array's elements instead).
      throw new BadRequestException({
        message: `${notObjects.join(', ')}: must be a JSON object`,
        fields: notObjects.map((field) => ({ field, problems: ['must be a JSON object'] })),
      });
    }
    if (unknown.length > 0) {
      throw new BadRequestException({
        message: `${unknown.join(', ')}: not ${unknown.length > 1 ? 'fields' : 'a field'} of this request`,
        code: 'unknown_field' satisfies HttpErrorCode,
        fields: unknown.map((field) => ({ field, problems: ['not a field of this request'] })),
      });
    }
    const check = this.shapeOf(metatype).check;
    if (check?.(instance as Record<string, unknown>)) return value;
    const errors = validateSync(instance, {
      forbidUnknownValues: false,
      validationError: { target: false, value: false },
    });
    if (errors.length > 0) {
      const fields = flatten(errors);
      const message = fields.map((f) => `${f.field}: ${f.problems.join(', ')}`).join('; ');
      throw new BadRequestException({ message: message || 'Invalid request body', fields });
    }
    // The compiled check said no and class-validator found nothing to name: fail closed.
    if (check) throw new BadRequestException({ message: 'Invalid request body', fields: [] });
    return value;
  }

  /** The DTO instance over `value`'s declared fields; undeclared ones are added to `unknown`, arrays where a nested DTO belongs to `notObjects`. */
  private instantiate(
    metatype: Metatype,
    value: Record<string, unknown>,
    path: string,
    unknown: string[],
    notObjects: string[],
  ): object {
    const shape = this.shapeOf(metatype);
    const instance = Object.create(metatype.prototype as object) as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      if (!shape.fields.has(key)) {
        unknown.push(path + key);
        continue;
      }
      const field = value[key];
      const nested = shape.nested.get(key);
      instance[key] =
        nested && Array.isArray(field)
          ? (field as unknown[]).map((item, i) => {
              if (Array.isArray(item)) notObjects.push(`${path}${key}.${i}`);
              return isPlainObject(item)
                ? this.instantiate(nested, item, `${path}${key}.${i}.`, unknown, notObjects)
                : item;
            })
          : field;
    }
    return instance;
  }

  private shapeOf(metatype: Metatype): DtoShape {
    let shape = this.shapes.get(metatype);
    if (!shape) {
      const metadatas = getMetadataStorage().getTargetValidationMetadatas(
        metatype,
        '',
        true,
        false,
      );
      const fields = new Set(metadatas.map((m) => m.propertyName));
      const nested = new Map<string, Metatype>();
      for (const field of fields) {
        const type = nestedDtoOf(metatype, field);
        if (type) nested.set(field, type as Metatype);
      }
      shape = { fields, nested, check: compileCheck(metatype) };
      this.shapes.set(metatype, shape);
    }
    return shape;
  }
}
