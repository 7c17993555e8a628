import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startServer, type TestServer } from '../support/test-server.js';
import {
  DocumentSchemas,
  type OpenApiDocument,
  type Operation,
  type Schema,
} from '../support/openapi-schemas.js';

const TOKENS = { all: 'dev-ordinal-token', read: 'read-secret' };

/** Values at the edges of what parameters and fields accept, and past them. */
const oddText = fc.constantFrom(
  '',
  ' ',
  '-1',
  '0',
  '1',
  '1e3',
  '1.5',
  '9007199254740993',
  'x'.repeat(300),
  'a b',
  '%00',
  '\u00e9',
  '😀',
  'null',
  '[]',
  '{}',
  'true',
);

/** A value for a JSON schema of the document: valid most of the time, by construction. */
function valueFor(schemas: DocumentSchemas, raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = schemas.resolve(raw);
  const nullable = schema.nullable ? fc.constant(null) : null;
  const withNull = (a: fc.Arbitrary<unknown>) =>
    nullable ? fc.oneof({ weight: 4, arbitrary: a }, { weight: 1, arbitrary: nullable }) : a;
  if (schema.oneOf)
    return withNull(
      fc.oneof(...(schema.oneOf as Schema[]).map((s) => valueFor(schemas, s, depth))),
    );
  if (schema.enum) return withNull(fc.constantFrom(...(schema.enum as unknown[])));
  switch (schema.type) {
    case 'object': {
      if (!schema.properties)
        return withNull(
          depth > 2
            ? fc.constant({})
            : fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), {
                maxKeys: 4,
              }),
        );
      const required = new Set<string>(schema.required ?? []);
      const props = Object.fromEntries(
        Object.entries(schema.properties as Record<string, Schema>).map(([k, s]) => [
          k,
          valueFor(schemas, s, depth + 1),
        ]),
      );
      return withNull(fc.record(props, { requiredKeys: [...required] as never[] }));
    }
    case 'array':
      return withNull(
        fc
          .array(valueFor(schemas, schema.items ?? {}, depth + 1), {
            minLength: schema.minItems ?? 0,
            maxLength: Math.min(schema.maxItems ?? 3, 3),
          })
          .filter((a) => a.length >= (schema.minItems ?? 0)),
      );
    case 'string':
      if (schema.pattern)
        return withNull(
          fc
            .stringMatching(new RegExp(schema.pattern))
            .filter(
              (s) => s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? 200),
            ),
        );
      if (schema.format === 'date-time')
        return withNull(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));
      return withNull(
        fc.string({
          minLength: schema.minLength ?? 0,
          maxLength: Math.min(schema.maxLength ?? 20, 20),
        }),
      );
    case 'integer':
      return withNull(
        fc.integer({
          min: Math.max(schema.minimum ?? -1000, -1e9),
          max: Math.min(schema.maximum ?? 1000, 1e9),
        }),
      );
    case 'number':
      return withNull(fc.double({ noNaN: true, noDefaultInfinity: true }));
    case 'boolean':
      return withNull(fc.boolean());
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** The text of a query or path value: a valid one, or an odd one. */
function paramText(schemas: DocumentSchemas, schema: Schema | undefined): fc.Arbitrary<string> {
  const valid = valueFor(schemas, schema ?? { type: 'string' }).map((v) =>
    typeof v === 'string' ? v : JSON.stringify(v),
  );
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: oddText });
}

interface Call {
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: string;
}

/** Requests for one operation: valid ones and ones with a body, parameter or header mutated. */
/**
 * A path parameter as one segment. Empty, `.` and `..` cannot be one: URL parsing resolves dot
 * segments (encoded too), so the request would reach another path (`/api/projections/./rebuild`
 * is `/api/projections/rebuild`), not this operation.
 */
const segment = (value: string) => (value === '' || value === '.' || value === '..' ? 'x' : value);

function callsFor(schemas: DocumentSchemas, path: string, op: Operation): fc.Arbitrary<Call> {
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const headerParams = params.filter((p) => p.in === 'header');
  const bodySchema = op.requestBody?.content['application/json']?.schema;
  const validBody = bodySchema
    ? valueFor(schemas, bodySchema).map((b) => JSON.stringify(b))
    : fc.constant(undefined);
  const mutatedBody = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    bodySchema
      ? valueFor(schemas, bodySchema)
          .chain((b) =>
            fc.tuple(fc.constant(b), fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })),
          )
          .map(([b, k, v]) => JSON.stringify({ ...(b as object), [k]: v }))
      : fc.constant('{}'),
    fc.constantFrom(
      '{',
      '[1,',
      '{"messageType":',
      'null',
      '"text"',
      '{"a":1e400}',
      '{"__proto__":{"x":1}}',
      `{"content":${'['.repeat(500)}${']'.repeat(500)}}`,
    ),
  );
  const authorization = fc.oneof(
    { weight: 8, arbitrary: fc.constant<string | undefined>(`Bearer ${TOKENS.all}`) },
    { weight: 1, arbitrary: fc.constant<string | undefined>(`Bearer ${TOKENS.read}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<string | undefined>(
        'Bearer wrong',
        undefined,
        'Basic abc',
        'Bearer',
      ),
    },
  );
  return fc
    .record({
      pathValues: fc.tuple(...pathParams.map((p) => paramText(schemas, p.schema))),
      query: fc.array(
        fc.tuple(
          fc.constantFrom(...(queryParams.length ? queryParams.map((p) => p.name) : ['x'])),
          paramText(schemas, { type: 'string' }),
        ),
        { maxLength: 3 },
      ),
      validQuery: fc.tuple(
        ...queryParams.map((p) => fc.option(paramText(schemas, p.schema), { nil: undefined })),
      ),
      headers: fc.tuple(
        ...headerParams.map((p) => fc.option(paramText(schemas, p.schema), { nil: undefined })),
      ),
      authorization,
      body: fc.oneof(
        { weight: 3, arbitrary: validBody },
        { weight: 1, arbitrary: bodySchema ? mutatedBody : fc.constant(undefined) },
      ),
      mutateQuery: fc.boolean().chain((a) => (a ? fc.boolean() : fc.constant(false))),
    })
    .map(({ pathValues, query, validQuery, headers, authorization, body, mutateQuery }) => {
      let concrete = path;
      pathParams.forEach(
        (p, i) =>
          (concrete = concrete.replace(`{${p.name}}`, encodeURIComponent(segment(pathValues[i])))),
      );
      const q: [string, string][] = queryParams.flatMap((p, i) =>
        validQuery[i] === undefined ? [] : [[p.name, validQuery[i]] as [string, string]],
      );
      if (mutateQuery) q.push(...query);
      const h: Record<string, string> = {};
      if (authorization) h.authorization = authorization;
      headerParams.forEach((p, i) => {
        if (headers[i] !== undefined && /^[\x20-\x7e]*$/.test(headers[i])) h[p.name] = headers[i]!;
      });
      if (body !== undefined) h['content-type'] = 'application/json';
      return { path: concrete, query: q, headers: h, body };
    });
}

describe('the OpenAPI document is the contract: fuzzing every operation from /api/docs-json (H1, H3)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let document: OpenApiDocument;
  let schemas: DocumentSchemas;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: `reader:${TOKENS.read}:read`,
      ORDINAL_HEARTBEAT_MS: '60000',
    });
    document = (await (await fetch(`${server.baseUrl}/api/docs-json`)).json()) as OpenApiDocument;
    schemas = new DocumentSchemas(document);
    // Some data for the reads to find
    await fetch(`${server.baseUrl}/api/streams/order-1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.all}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        expectedVersion: 0,
        events: [{ eventType: 'Placed', data: { n: 1 } }],
      }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('documents every operation with a summary, its responses and the one error schema', () => {
    for (const [path, ops] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect([where, typeof (op as { summary?: string }).summary]).toEqual([where, 'string']);
        const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
        expect([where, success.length > 0]).toEqual([where, true]);
        for (const [status, response] of Object.entries(op.responses)) {
          // Errors have the one error body; only a batch's 422 (its entries) and /health's 503 (the health report) answer more
          const own =
            (status === '422' && path === '/api/events/messages') ||
            (status === '503' && path === '/health');
          if (Number(status) >= 400 && !own)
            expect([where, status, response.content?.['application/json']?.schema]).toEqual([
              where,
              status,
              { $ref: '#/components/schemas/ErrorResponseDto' },
            ]);
          else if (status !== '204')
            expect([where, status, Object.keys(response.content ?? {}).length > 0]).toEqual([
              where,
              status,
              true,
            ]);
        }
        // (`security: []`: a public operation, no token and no scope)
        if (op.security?.length)
          expect([where, op['x-required-scopes']?.length]).toEqual([where, 1]);
      }
    }
    // A bearer token is a static token or a JWT (docs/security.md): the scheme claims no one format.
    const { bearer } = (
      document.components as unknown as {
        securitySchemes: Record<string, { description?: string }>;
      }
    ).securitySchemes;
    expect(bearer).not.toHaveProperty('bearerFormat');
    expect(bearer.description).toMatch(/ORDINAL_TOKENS.*ORDINAL_JWT_JWKS_URL/);
  });

  it('has examples that validate against their own schemas', () => {
    let examples = 0;
    for (const [name, component] of Object.entries(document.components.schemas) as [
      string,
      Schema,
    ][]) {
      for (const [property, schema] of Object.entries(
        (component.properties ?? {}) as Record<string, Schema>,
      )) {
        if (schema.example === undefined) continue;
        examples++;
        const validate = schemas.validator(schema);
        expect([name, property, validate(schema.example) ? null : validate.errors]).toEqual([
          name,
          property,
          null,
        ]);
      }
    }
    expect(examples).toBeGreaterThan(10);
  });

  it('checks bodies for real: the validators refuse what breaks a schema', () => {
    const head = schemas.validator({ $ref: '#/components/schemas/HeadResponseDto' });
    expect(head({ head: 3 })).toBe(true);
    expect(head({ head: '3' })).toBe(false);
    const message = schemas.validator({ $ref: '#/components/schemas/MessageResponseDto' });
    const valid = {
      id: 2,
      messageType: 'A',
      userId: null,
      body: [1],
      metadata: null,
      contentHash: 'h',
      createdAt: '2026-12-01T00:00:00.000Z',
    };
    expect(message(valid)).toBe(true);
    expect(message({ ...valid, userId: 5 })).toBe(false);
    expect(message({ ...valid, body: 'text' })).toBe(false);
    const snapshot = schemas.validator({ $ref: '#/components/schemas/SnapshotReadDto' });
    expect(snapshot({ streamId: 's', snapshot: null })).toBe(true);
    expect(snapshot({ streamId: 's', snapshot: { version: 'x' } })).toBe(false);
  });

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
    );

  it('answers every generated request, valid or mutated, with a documented status and a body matching its schema, never a 5xx', async () => {
    let calls = 0;
    for (const { path, method, op } of operations()) {
      await fc.assert(
        fc.asyncProperty(callsFor(schemas, path, op), async (call) => {
          calls++;
          const url = new URL(call.path, server.baseUrl);
          for (const [k, v] of call.query) url.searchParams.append(k, v);
          const abort = new AbortController();
          const res = await fetch(url, {
            method,
            headers: call.headers,
            body: call.body,
            signal: abort.signal,
          });
          const where = `${method} ${url.pathname}${url.search} ${JSON.stringify(call.headers)} ${call.body?.slice(0, 200) ?? ''} → ${res.status}`;
          // Never a 5xx, and only statuses the document lists for this operation
          expect([where, res.status < 500]).toEqual([where, true]);
          expect([where, Object.keys(op.responses).includes(String(res.status))]).toEqual([
            where,
            true,
          ]);
          const type = res.headers.get('content-type') ?? '';
          if (type.startsWith('text/event-stream')) {
            abort.abort();
            expect([where, Object.keys(op.responses[String(res.status)].content ?? {})]).toEqual([
              where,
              ['text/event-stream'],
            ]);
            return;
          }
          const text = await res.text();
          const documented = op.responses[String(res.status)].content ?? {};
          if (res.status === 204) return expect(text).toBe('');
          const mediaType = Object.keys(documented).find((t) => type.startsWith(t));
          expect([where, type, mediaType !== undefined]).toEqual([where, type, true]);
          const schema = documented[mediaType!].schema;
          if (mediaType === 'application/json' && schema) {
            const validate = schemas.validator(schema);
            const body = JSON.parse(text);
            expect([where, validate(body) ? null : validate.errors]).toEqual([where, null]);
          }
        }),
        { numRuns: 50 },
      );
    }
    expect(calls).toBeGreaterThan(500);
  });
});
