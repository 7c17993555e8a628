import type { HttpResponse as Response } from './test-server.js';
import { DocumentSchemas, type OpenApiDocument, type Operation } from './openapi-schemas.js';

interface Route {
  pattern: RegExp;
  literals: number;
  operations: Record<string, Operation>;
}

const documents = new Map<string, Promise<{ schemas: DocumentSchemas; routes: Route[] }>>();

function load(baseUrl: string) {
  let loaded = documents.get(baseUrl);
  if (!loaded) {
    loaded = fetch(`${baseUrl}/api/docs-json`)
      .then((r) => r.json() as Promise<OpenApiDocument>)
      .then((document) => ({
        schemas: new DocumentSchemas(document),
        routes: Object.entries(document.paths)
          .map(([path, operations]) => ({
            pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
            literals: path.split('/').filter((s) => s && !s.startsWith('{')).length,
            operations,
          }))
          // A literal segment wins over a parameter, as in the router (/api/events/head before /api/events/{index}).
          .sort((a, b) => b.literals - a.literals),
      }));
    // A failed fetch (the server was stopping) is not remembered: the next check asks again.
    loaded.catch(() => documents.delete(baseUrl));
    documents.set(baseUrl, loaded);
  }
  return loaded;
}

/**
 * Checks one response against the server's own OpenAPI document: the status is one the
 * operation documents, and a JSON body matches the schema documented for that status. A
 * request no documented operation matches (a wrong method, an unknown path) is not checked.
 */
export async function assertConforms(
  baseUrl: string,
  method: string,
  path: string,
  res: Response,
): Promise<void> {
  const { schemas, routes } = await load(baseUrl);
  const pathname = new URL(path, baseUrl).pathname;
  const operation = routes.find((r) => r.pattern.test(pathname))?.operations[method.toLowerCase()];
  if (!operation) return;
  const where = `${method} ${path} → ${res.status}`;
  const documented = operation.responses[String(res.status)];
  if (!documented)
    throw new Error(
      `${where}: status not in the OpenAPI document (documented: ${Object.keys(operation.responses).join(', ')})`,
    );
  const schema = documented.content?.['application/json']?.schema;
  if (!schema || typeof res.body !== 'object') return;
  const validate = schemas.validator(schema);
  if (!validate(res.body))
    throw new Error(
      `${where}: body does not match the document: ${JSON.stringify(validate.errors)}; body ${JSON.stringify(res.body).slice(0, 300)}`,
    );
}

/** The checked request helper (every `http()` of test-server.ts checks its answer now). */
export { http as checkedHttp } from './test-server.js';
