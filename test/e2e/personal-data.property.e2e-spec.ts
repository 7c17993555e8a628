import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, startServer, type TestServer } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';

/**
 * Issue 25's property: random publishes for several subjects, random erasures and readers with
 * the `personal` scope, some of each running at once. No read that started after a subject's
 * erasure answered shows that subject's clear value, on a page, a single read or an SSE
 * history; no publish for a subject that started after its erasure answered is stored; a
 * subject never erased reads in clear to the end. One server, runs on disjoint subjects.
 */

type Op =
  | { kind: 'publish'; s: number }
  | { kind: 'erase'; s: number }
  | { kind: 'page' }
  | { kind: 'one' }
  | { kind: 'sse' };

const SUBJECTS = 4;
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('publish' as const), s: fc.nat(SUBJECTS - 1) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('erase' as const), s: fc.nat(SUBJECTS - 1) }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'page' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'one' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'sse' as const }) },
);
/** Ops in waves: the ops of one wave run at once, the waves one after another. */
const scenario = fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), {
  minLength: 3,
  maxLength: 8,
});

// `npm test` runs a few; `npm run test:property` (ORDINAL_PROPERTY_RUNS) more.
const RUNS = Number(process.env.ORDINAL_PROPERTY_RUNS ?? 4);

describe('personal data, the property (issue 25)', () => {
  const PRIVY = { authorization: 'Bearer privy-secret' };
  let db: TestDatabase;
  let server: TestServer;
  let run = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'privy:privy-secret:read+personal',
      ORDINAL_MASTER_KEY: randomBytes(32).toString('base64'),
    });
    const rule = await http(
      server.baseUrl,
      'PUT',
      '/api/personal-data/rules/Person',
      { subject: '/id', fields: ['/email'], replacement: { '/email': null } },
      DEV_AUTH,
    );
    expect(rule.status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  /** One run; returns every violation found. */
  async function runScenario(waves: Op[][]): Promise<string[]> {
    const r = ++run;
    const subject = (s: number) => `p${r}-s${s}`;
    const emailOf = (s: number) => `${subject(s)}@mail.example`;
    /** When each subject's erasure answered (ms, this process's clock). */
    const erasedAt = new Map<number, number>();
    /** Subjects whose erasure was asked (answered or not). */
    const erasing = new Set<number>();
    const stored: number[] = [];
    const violations: string[] = [];
    let first = Number.POSITIVE_INFINITY;
    /** A read's messages, judged against the erasures answered before the read started. */
    const judge = (
      what: string,
      startedAt: number,
      messages: { id: number; body: { id: string; email: unknown } }[],
    ) => {
      for (const m of messages) {
        const s = Number(/^p\d+-s(\d+)$/.exec(m.body.id)?.[1] ?? -1);
        if (!m.body.id.startsWith(`p${r}-`)) continue;
        const erased = erasedAt.get(s);
        if (erased !== undefined && erased < startedAt && m.body.email === emailOf(s))
          violations.push(`${what} started after ${subject(s)}'s erasure showed ${m.id} in clear`);
        if (!erasing.has(s) && m.body.email !== emailOf(s))
          violations.push(
            `${what}: ${m.id} of ${subject(s)}, never erased, read ${String(m.body.email)}`,
          );
      }
    };
    const act = async (o: Op): Promise<void> => {
      const startedAt = performance.now();
      if (o.kind === 'publish') {
        const res = await http(
          server.baseUrl,
          'PUT',
          '/api/events/message',
          { messageType: 'Person', content: { id: subject(o.s), email: emailOf(o.s) } },
          DEV_AUTH,
        );
        const erased = erasedAt.get(o.s);
        if (res.status === 201) {
          stored.push(res.body.id);
          first = Math.min(first, res.body.id);
          if (erased !== undefined && erased < startedAt)
            violations.push(`a publish for ${subject(o.s)} after its erasure was stored`);
        } else if (res.status !== 422 || res.body.code !== 'subject_erased' || !erasing.has(o.s))
          violations.push(`a publish for ${subject(o.s)} answered ${res.status} ${res.body.code}`);
      } else if (o.kind === 'erase') {
        erasing.add(o.s);
        const res = await http(
          server.baseUrl,
          'POST',
          `/api/subjects/${subject(o.s)}/erase`,
          { reason: 'property' },
          DEV_AUTH,
        );
        if (res.status !== 200) violations.push(`erasing ${subject(o.s)} answered ${res.status}`);
        else if (!erasedAt.has(o.s)) erasedAt.set(o.s, performance.now());
      } else if (stored.length > 0) {
        const from = first;
        const to = Math.max(...stored);
        if (o.kind === 'page') {
          const res = await http(
            server.baseUrl,
            'GET',
            `/api/events?fromIndex=${from}&limit=1000&types=Person`,
            undefined,
            PRIVY,
          );
          judge('a page', startedAt, res.body.messages);
        } else if (o.kind === 'one') {
          const index = stored[stored.length - 1];
          const res = await http(server.baseUrl, 'GET', `/api/events/${index}`, undefined, PRIVY);
          judge('a single read', startedAt, [res.body]);
        } else {
          const sse = await SseConnection.open(
            server.baseUrl,
            `/api/events/stream?startIndex=${from}&endIndex=${to}&types=Person`,
            PRIVY,
          );
          await sse.waitFor(() => sse.events.some((e) => e.event === 'stream-ended'));
          sse.close();
          judge(
            'an SSE history',
            startedAt,
            sse.events.filter((e) => e.event === 'message').map((e) => e.data.message),
          );
        }
      }
    };
    for (const wave of waves) await Promise.all(wave.map(act));
    // And at the end, a read of everything: every erased subject replaced, the others in clear
    if (stored.length > 0) {
      const end = await http(
        server.baseUrl,
        'GET',
        `/api/events?fromIndex=${first}&limit=1000&types=Person`,
        undefined,
        PRIVY,
      );
      judge('the final read', performance.now(), end.body.messages);
      for (const m of end.body.messages)
        if (
          m.body.id.startsWith(`p${r}-`) &&
          m.body.email === null &&
          JSON.stringify(m.redacted) !== '["/email"]'
        )
          violations.push(`${m.id} replaced without redacted: ["/email"]`);
    }
    return violations;
  }

  it(`no read started after an erasure answered shows the subject in clear (${RUNS} runs, or ORDINAL_PROPERTY_RUNS)`, async () => {
    let completed = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (waves) => {
        const violations = await runScenario(waves);
        if (violations.length > 0)
          throw new Error(`${violations.join('\n')}\nscenario: ${JSON.stringify(waves)}`);
        completed++;
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(completed).toBe(RUNS);
  });
});
