import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

const RULES = `
rules:
  - principal: token:billing
    allow: [read, write]
    categories: ["invoice-*", "payment-*"]
  - principal: token:pub
    allow: [read, write]
    types: ["Invoice*", "Payment*"]
  - principal: token:ops
    allow: [read, write]
`;

const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });
const ops = auth('ops-secret');
const billing = auth('billing-secret');
const pub = auth('pub-secret');
const hr = auth('hr-secret');

describe('access rules on categories and types, on every path', () => {
  let db: TestDatabase;
  let server: TestServer;
  let dir: string;
  const at: Record<string, number> = {};

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'ordinal-rules-'));
    writeFileSync(join(dir, 'access.yaml'), RULES);
    server = await startServer(db.url, {
      ORDINAL_TOKENS:
        'ops:ops-secret:read+write+admin;billing:billing-secret:read+write;pub:pub-secret:read+write;hr:hr-secret:read+write',
      ORDINAL_ACCESS_RULES: join(dir, 'access.yaml'),
    });
    // Given one stream in each of three categories, written by ops (every category)
    for (const [streamId, eventType] of [
      ['invoice-1', 'InvoiceIssued'],
      ['employee-1', 'EmployeeHired'],
      ['payment-1', 'PaymentTaken'],
    ]) {
      const res = await http(
        server.baseUrl,
        'POST',
        `/api/streams/${streamId}/events`,
        {
          expectedVersion: 'no_stream',
          events: [{ eventType, data: { secret: `${streamId}-body` } }],
        },
        ops,
      );
      expect(res.status).toBe(201);
      at[streamId] = res.body.firstIndex;
    }
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const head = async () =>
    (await http(server.baseUrl, 'GET', '/api/events/head', undefined, ops)).body.head as number;

  it('writes: allowed where a rule says, 403 access_denied elsewhere, and for a principal no rule names', async () => {
    const append = (who: Record<string, string>, streamId: string, eventType: string) =>
      http(
        server.baseUrl,
        'POST',
        `/api/streams/${streamId}/events`,
        { expectedVersion: 'any', events: [{ eventType, data: {} }] },
        who,
      );
    expect((await append(billing, 'invoice-2', 'InvoiceIssued')).status).toBe(201);
    const denied = await append(billing, 'employee-2', 'EmployeeHired');
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      code: 'access_denied',
      denied: { streamId: 'employee-2', messageType: 'EmployeeHired' },
    });
    expect((await append(hr, 'employee-2', 'EmployeeHired')).body.code).toBe('access_denied');
    // A whole-stream write (delete) needs the whole category
    const del = await http(server.baseUrl, 'DELETE', '/api/streams/employee-1', undefined, billing);
    expect(del.status).toBe(403);
  });

  it('refuses a batch with one forbidden message whole, naming it', async () => {
    // Given a head before
    const before = await head();
    // When a batch of an allowed and a forbidden type is published
    const res = await http(
      server.baseUrl,
      'POST',
      '/api/events/messages',
      {
        messages: [
          { messageType: 'InvoicePaid', content: {} },
          { messageType: 'EmployeeFired', content: {} },
        ],
      },
      pub,
    );
    // Then it is refused, naming the second, and nothing is stored
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      code: 'access_denied',
      denied: { index: 1, messageType: 'EmployeeFired' },
    });
    expect(await head()).toBe(before);
    // And an allowed one is stored
    const ok = await http(
      server.baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'PaymentRefunded', content: {} },
      pub,
    );
    expect(ok.status).toBe(201);
  });

  it('reads: streams, single messages, stream lists and pages show only what the rules allow', async () => {
    expect(
      (await http(server.baseUrl, 'GET', '/api/streams/invoice-1', undefined, billing)).status,
    ).toBe(200);
    const stream = await http(server.baseUrl, 'GET', '/api/streams/employee-1', undefined, billing);
    expect(stream.status).toBe(403);
    expect(stream.body.code).toBe('access_denied');
    const one = await http(
      server.baseUrl,
      'GET',
      `/api/events/${at['employee-1']}`,
      undefined,
      billing,
    );
    expect({ status: one.status, code: one.body.code }).toEqual({
      status: 403,
      code: 'access_denied',
    });
    // And the refusal names neither its type nor its stream (walking the indices must not list them)
    expect(JSON.stringify(one.body)).not.toMatch(/employee|EmployeeHired/i);
    const list = await http(server.baseUrl, 'GET', '/api/streams', undefined, billing);
    expect(list.body.streams.map((s: { streamId: string }) => s.streamId).sort()).toEqual([
      'invoice-1',
      'invoice-2',
      'payment-1',
    ]);
    // A page: forbidden messages left out, nextIndex still past them
    const h = await head();
    const page = await http(
      server.baseUrl,
      'GET',
      `/api/events?fromIndex=1&limit=1000`,
      undefined,
      billing,
    );
    expect(page.body.nextIndex).toBe(h + 1);
    const streams = page.body.messages.map((m: { streamId?: string }) => m.streamId ?? null);
    expect(streams.sort()).toEqual(['invoice-1', 'invoice-2', 'payment-1']);
    // And a principal no rule names sees nothing
    const none = await http(
      server.baseUrl,
      'GET',
      `/api/events?fromIndex=1&limit=1000`,
      undefined,
      hr,
    );
    expect({ count: none.body.count, nextIndex: none.body.nextIndex }).toEqual({
      count: 0,
      nextIndex: h + 1,
    });
  });

  it('SSE: a reader with partial rights gets a filtered stream, never a forbidden body, type or stream id, and reaches the end', async () => {
    const h = await head();
    // Through a stream ticket, as a browser would
    const ticket = await http(
      server.baseUrl,
      'POST',
      '/api/events/stream-ticket',
      undefined,
      billing,
    );
    const stream = await SseConnection.open(
      server.baseUrl,
      `/api/events/stream?startIndex=1&endIndex=${h}&ticket=${encodeURIComponent(ticket.body.ticket)}`,
      {},
    );
    expect(stream.status).toBe(200);
    await stream.waitFor(
      () => stream.events.some((e) => e.event === 'stream-ended'),
      10_000,
      'stream-ended',
    );
    stream.close();
    const sent = stream.events.filter((e) => e.event === 'message').map((e) => e.data.message);
    expect(sent.map((m: { streamId: string }) => m.streamId).sort()).toEqual([
      'invoice-1',
      'invoice-2',
      'payment-1',
    ]);
    const text = JSON.stringify(stream.events);
    expect(text).not.toContain('employee');
    expect(text).not.toContain('EmployeeHired');
  });

  it('consumer groups: a member must be allowed to read the whole source', async () => {
    for (const [group, category] of [
      ['hr-feed', 'employee'],
      ['billing-feed', 'invoice'],
    ]) {
      const res = await http(
        server.baseUrl,
        'PUT',
        `/api/consumer-groups/${group}`,
        { source: { category } },
        ops,
      );
      expect(res.status).toBe(201);
    }
    const denied = await http(
      server.baseUrl,
      'POST',
      '/api/consumer-groups/hr-feed/fetch',
      { max: 1 },
      billing,
    );
    expect({ status: denied.status, code: denied.body.code }).toEqual({
      status: 403,
      code: 'access_denied',
    });
    // And every other member route of that group is denied the same way (a principal that may
    // not read the source may not settle its events, see its state or its parked events)
    const member = { memberId: 'm-billing', epoch: 1, indices: [1] };
    for (const [method, path, body] of [
      ['GET', '/api/consumer-groups/hr-feed', undefined],
      ['POST', '/api/consumer-groups/hr-feed/ack', member],
      ['POST', '/api/consumer-groups/hr-feed/nack', { ...member, action: 'retry' }],
      ['GET', '/api/consumer-groups/hr-feed/parked', undefined],
      ['GET', '/api/consumer-groups/hr-feed/stream', undefined],
    ] as const) {
      const res = await http(server.baseUrl, method, path, body, billing);
      expect({ path, status: res.status, code: res.body?.code }).toEqual({
        path,
        status: 403,
        code: 'access_denied',
      });
    }
    const allowed = await http(
      server.baseUrl,
      'POST',
      '/api/consumer-groups/billing-feed/fetch',
      { max: 10, waitMs: 0 },
      billing,
    );
    expect(allowed.status).toBe(200);
    expect(
      (await http(server.baseUrl, 'GET', '/api/consumer-groups/billing-feed', undefined, billing))
        .status,
    ).toBe(200);
    // And the list of groups leaves out those it is refused (their source, members and lag)
    const listed = await http(server.baseUrl, 'GET', '/api/consumer-groups', undefined, billing);
    expect(listed.body.groups.map((g: { group: string }) => g.group)).toEqual(['billing-feed']);
    const all = await http(server.baseUrl, 'GET', '/api/consumer-groups', undefined, ops);
    expect(all.body.groups.map((g: { group: string }) => g.group).sort()).toEqual([
      'billing-feed',
      'hr-feed',
    ]);
  });

  it('an idempotency key reused by another principal never hands back a message it may not read', async () => {
    // Given a message of a type pub may not read, stored under a key
    const stored = await http(
      server.baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'EmployeeSalary', content: { amount: 123456 }, idempotencyKey: 'k-shared-1' },
      ops,
    );
    expect(stored.status).toBe(201);
    // When pub sends another message under the same key, in a batch and alone
    const batch = await http(
      server.baseUrl,
      'POST',
      '/api/events/messages',
      { messages: [{ messageType: 'InvoiceX', content: { x: 1 }, idempotencyKey: 'k-shared-1' }] },
      pub,
    );
    const single = await http(
      server.baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'InvoiceX', content: { x: 1 }, idempotencyKey: 'k-shared-1' },
      pub,
    );
    // Then both are refused as a reused key, naming neither the message, its type, body nor index
    expect({ status: batch.status, entry: batch.body.messages[0] }).toEqual({
      status: 422,
      entry: { status: 'key_reused', code: 'idempotency_key_reused' },
    });
    expect({ status: single.status, code: single.body.code, id: single.body.id }).toEqual({
      status: 422,
      code: 'idempotency_key_reused',
      id: undefined,
    });
    for (const body of [batch.body, single.body]) {
      const text = JSON.stringify(body);
      expect(text).not.toMatch(/EmployeeSalary|123456/);
      expect(text).not.toContain(`index ${stored.body.id}`);
    }
    // And the principal that may read it still learns where it is
    const owner = await http(
      server.baseUrl,
      'PUT',
      '/api/events/message',
      { messageType: 'EmployeeSalary', content: { amount: 1 }, idempotencyKey: 'k-shared-1' },
      ops,
    );
    expect({ status: owner.status, id: owner.body.id }).toEqual({
      status: 422,
      id: stored.body.id,
    });
  });

  it('the stream list pages through readable streams only: no `next` names a stream it may not read', async () => {
    const seen: string[] = [];
    const cursors: string[] = [];
    let after = '';
    for (let page = 0; page < 20; page++) {
      const res = await http(
        server.baseUrl,
        'GET',
        `/api/streams?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}`,
        undefined,
        billing,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.streams.map((s: { streamId: string }) => s.streamId));
      if (res.body.next === undefined) break;
      cursors.push(res.body.next);
      after = res.body.next;
    }
    expect(seen).toEqual(['invoice-1', 'invoice-2', 'payment-1']);
    expect(cursors.filter((c) => !/^(invoice|payment)-/.test(c))).toEqual([]);
  });
});
