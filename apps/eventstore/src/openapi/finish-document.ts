import type { OpenAPIObject } from '@nestjs/swagger';

/** The document's tags, in the order a reader meets them, each with what it groups. */
export const OPENAPI_TAGS: { name: string; description: string }[] = [
  { name: 'ingestion', description: 'Storing messages: one, a batch, or a bulk import' },
  {
    name: 'reading',
    description: 'Reading the log: pages, one message, the head, the live stream',
  },
  {
    name: 'streams',
    description:
      'Aggregate streams: events by stream, versions, snapshots, delete and tombstone, metadata and retention',
  },
  {
    name: 'projections',
    description:
      'Projections and subscriptions of every process on the database: owner, standbys, position, lag, rebuild, parked messages',
  },
  {
    name: 'operations',
    description: 'Running the store: health, metrics, push interfaces, dead letters, scavenge',
  },
  {
    name: 'personal-data',
    description:
      'Personal data that can be forgotten: rules per message type, erasure of a subject, the erasure ledger',
  },
  {
    name: 'consumer-groups',
    description:
      'Competing consumers for external services: a group, its members, fetch and stream, ack and nack, parked events',
  },
];

// A schema object as the generator writes it (any JSON below a key).
type Json = Record<string, unknown>;

/**
 * A property `{ nullable: true, type: 'object', allOf: [{ $ref }] }` (what `@ApiProperty({ type:
 * Dto, nullable: true })` writes) in OpenAPI 3.0's correct form: `nullable` widens only its own
 * schema's `type`, and the `allOf` must hold too, so a real `null` answer fails it in strict
 * validators. `oneOf` the referenced schema or a schema that admits `null` alone says it.
 */
function nullableRef(schema: Json): Json {
  const { nullable, allOf, $ref, type, ...rest } = schema;
  void nullable;
  void type;
  const target = $ref !== undefined ? [{ $ref }] : (allOf as Json[]);
  return {
    ...rest,
    oneOf: [...target, { type: 'object', nullable: true, enum: [null] }],
  };
}

function fixSchemas(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fixSchemas);
  if (value === null || typeof value !== 'object') return value;
  const schema = value as Json;
  const out: Json = {};
  for (const [key, child] of Object.entries(schema)) out[key] = fixSchemas(child);
  // (the generator writes `type: 'object'` beside the `allOf`: null still fails the `allOf`)
  const refOnly =
    (Array.isArray(out.allOf) && out.allOf.length === 1) || typeof out.$ref === 'string';
  return out.nullable === true && refOnly ? nullableRef(out) : out;
}

/**
 * Completes the generated document so that OpenAPI linters (Redocly, Spectral) and strict
 * validators accept it: a server (`/`, the server that serves the document), `security: []`
 * on the operations that need no token (Swagger's generator leaves them without any, which
 * reads as "undefined"), the tags at the root with descriptions, and nullable references in
 * the form OpenAPI 3.0 means. One place for rules that hold for every operation and schema,
 * so a new DTO or route needs nothing. Linted in `test/e2e/openapi-lint.e2e-spec.ts`.
 */
export function finishDocument(document: OpenAPIObject): OpenAPIObject {
  const used = new Set<string>();
  for (const item of Object.values(document.paths))
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(method)) continue;
      const op = operation as { tags?: string[]; security?: unknown[] };
      op.tags?.forEach((t) => used.add(t));
      op.security ??= [];
    }
  const unknown = [...used].filter((t) => !OPENAPI_TAGS.some((k) => k.name === t));
  if (unknown.length > 0)
    throw new Error(`OpenAPI tags without a description in OPENAPI_TAGS: ${unknown.join(', ')}`);
  return {
    ...document,
    servers: [{ url: '/', description: 'The server that serves this document' }],
    tags: OPENAPI_TAGS.filter((t) => used.has(t.name)),
    paths: fixSchemas(document.paths) as OpenAPIObject['paths'],
    components: fixSchemas(document.components) as OpenAPIObject['components'],
  };
}
