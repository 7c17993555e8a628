import type { LogPage, OrdinalMessage } from '@ordinal/client';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startServer, type TestServer } from '../support/test-server.js';

// The types agree at compile time: apps/eventstore/src/openapi/client-contract.ts (part of the build).

/** Every field of OrdinalMessage, checked by the compiler to be exactly its keys. */
const MESSAGE_FIELDS: Record<keyof OrdinalMessage, true> = {
  id: true,
  messageType: true,
  userId: true,
  body: true,
  metadata: true,
  contentHash: true,
  createdAt: true,
  streamId: true,
  streamVersion: true,
  schemaVersion: true,
  idempotencyKey: true,
  correlationId: true,
  causationId: true,
  traceparent: true,
};
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
    expect(Object.keys(message.properties).sort()).toEqual(Object.keys(MESSAGE_FIELDS).sort());
    expect([...(message.required ?? [])].sort()).toEqual(
      ['contentHash', 'createdAt', 'body', 'id', 'messageType', 'metadata', 'userId'].sort(),
    );
    expect(Object.keys(schema('PageResponseDto').properties).sort()).toEqual(
      Object.keys(PAGE_FIELDS).sort(),
    );
  });
});
