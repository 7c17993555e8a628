import { Ajv, type ValidateFunction } from 'ajv';

/** An OpenAPI 3.0 document, as far as the tests read it. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

export interface Operation {
  parameters?: {
    name: string;
    in: 'path' | 'query' | 'header';
    required?: boolean;
    schema?: Schema;
  }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  security?: unknown[];
  'x-required-scopes'?: string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON Schema keyword may hold anything; the fuzz spec walks them freely
export type Schema = Record<string, any>;

/**
 * OpenAPI 3.0's schema dialect as JSON Schema: `nullable: true` becomes a `null` alternative
 * (also beside a `$ref`/`allOf`, where a `type` list would not do), `example` is dropped.
 */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const { nullable, example, ...rest } = schema as Schema;
  void example;
  const out: Schema = {};
  for (const [k, v] of Object.entries(rest))
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, toJsonSchema(s)]))
        : toJsonSchema(v);
  if (!nullable) return out;
  if (typeof out.type === 'string' && !out.allOf && !out.oneOf && !out.$ref)
    return { ...out, type: [out.type, 'null'] };
  return { anyOf: [out, { type: 'null' }] };
}

/** Validators for the document's schemas (component refs resolved), compiled once each. */
export class DocumentSchemas {
  private readonly ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    this.ajv.addSchema({
      $id: 'doc',
      components: { schemas: toJsonSchema(document.components.schemas) },
    });
  }

  /** A schema from the document (refs like `#/components/schemas/X`) as a validator. */
  validator(schema: Schema): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      const rebased = JSON.parse(key.replaceAll('"#/components/', '"doc#/components/')) as Schema;
      validate = this.ajv.compile(toJsonSchema(rebased) as object);
      this.cache.set(key, validate);
    }
    return validate;
  }

  /** Resolves a `$ref` (and a single `allOf`) to the schema it names. */
  resolve(schema: Schema): Schema {
    if (schema.$ref)
      return this.resolve(
        this.document.components.schemas[String(schema.$ref).split('/').pop()!] as Schema,
      );
    if (Array.isArray(schema.allOf) && schema.allOf.length === 1)
      return {
        ...this.resolve(schema.allOf[0] as Schema),
        ...(schema.nullable ? { nullable: true } : {}),
      };
    return schema;
  }
}
