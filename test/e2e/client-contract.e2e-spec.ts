import type { LogPage } from '@ordinal/client';
import { MESSAGE_FIELDS } from '@ordinal/contract';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startServer, type TestServer } from '../support/test-server.js';

// The types agree at compile time: apps/eventstore/src/openapi/client-contract.ts (part of the build).

const PAGE_FIELDS: Record<keyof LogPage, true> = {
  fromIndex: true,
  head: true,
  nextIndex: true,
  count: true,
  messages: true,
};

describe('@ordinal/client agrees with the OpenAPI document (H3)', () => {
  let db: TestDatabase;
  let server: TestServer;
  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('names the same fields, required the same way, as the document the server publishes', async () => {
    const doc = await (await fetch(`${server.baseUrl}/api/docs-json`)).json();
    const schema = (name: string) =>
      doc.components.schemas[name] as { properties: Record<string, unknown>; required?: string[] };
    const message = schema('MessageResponseDto');
    // The contract's field list (the compiler checks it against OrdinalMessage)
    const fields = Object.entries(MESSAGE_FIELDS);
    expect(Object.keys(message.properties)).toEqual(fields.map(([name]) => name));
    expect([...(message.required ?? [])].sort()).toEqual(
      fields
        .filter(([, rule]) => !rule.optional)
        .map(([name]) => name)
        .sort(),
    );
    expect(Object.keys(schema('PageResponseDto').properties).sort()).toEqual(
      Object.keys(PAGE_FIELDS).sort(),
    );
  });
});
