import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { http, startServer, waitFor, type TestServer } from '../support/test-server.js';
import { HeldTransaction } from '../support/held-transaction.js';

/**
 * docs/guarantees.md, G1: a 503 with `outcomeUnknown: true` means the commit was sent and no
 * answer came. A retry with the same idempotency key answers 200 with the stored index when
 * the original landed, and stores it once when it did not.
 *
 * The commit is made to wait by a deferred constraint trigger of the test's own (it runs at
 * COMMIT) that takes an advisory lock the test holds, then fails the commit or not as a gate
 * row says. The server's query timeout fires while its COMMIT waits: the outcome is unknown to
 * it, and the test decides it by releasing the lock.
 */

const QUERY_TIMEOUT_MS = 1500;
/** The advisory lock the trigger waits for (a key of the test's own, not one of Ordinal's). */
const GATE_LOCK = 7_310_042;

describe('a 503 with outcomeUnknown (G1)', () => {
  let db: TestDatabase;
  let server: TestServer;
  const held: HeldTransaction[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, { ORDINAL_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS) });
    await db.query(`CREATE TABLE test_commit_gate (fail boolean NOT NULL)`);
    await db.query(`INSERT INTO test_commit_gate VALUES (false)`);
    await db.query(`
      CREATE FUNCTION test_hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(${GATE_LOCK});
        IF (SELECT fail FROM test_commit_gate) THEN
          RAISE EXCEPTION 'the test fails this commit';
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE CONSTRAINT TRIGGER test_hold_commit AFTER INSERT ON messages
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.message_type = 'Held')
        EXECUTE FUNCTION test_hold_commit()`);
  });
  afterAll(async () => {
    for (const tx of held) await tx.rollback().catch(() => undefined);
    await server?.close();
    await db?.drop();
  });

  /** Holds the gate: commits of 'Held' messages wait until `release`. */
  async function holdCommits(fail: boolean): Promise<{ release(): Promise<void> }> {
    await db.query('UPDATE test_commit_gate SET fail = $1', [fail]);
    const gate = await HeldTransaction.begin(db.url);
    held.push(gate);
    await gate.query('SELECT pg_advisory_xact_lock($1)', [GATE_LOCK]);
    return { release: () => gate.commit() };
  }

  const stored = async (key: string) =>
    (
      await db.query<{ index: string }>(
        'SELECT index::text AS index FROM messages WHERE idempotency_key = $1',
        [key],
      )
    ).map((r) => Number(r.index));

  /** Waits until no session waits for or holds the gate (the abandoned commit has ended). */
  const gateIdle = () =>
    waitFor(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
              WHERE l.locktype = 'advisory' AND l.objid = $1 AND d.datname = current_database()`,
            [GATE_LOCK],
          )
        ).length === 0,
      10_000,
      'the abandoned commit to end',
    );

  const publish = (key: string, n: number) =>
    http(server.baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Held',
      content: { n },
      idempotencyKey: key,
    });

  it('a retry with the same key after the original landed answers 200 with the stored index', async () => {
    // Given commits of 'Held' messages wait at the gate
    const gate = await holdCommits(false);
    // When a keyed message's commit outlasts the query timeout
    const first = await publish('landed-1', 1);
    // Then the answer is 503 outcomeUnknown with Retry-After, and nothing is visible yet
    expect(first.status).toBe(503);
    expect(first.body.outcomeUnknown).toBe(true);
    expect(first.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await stored('landed-1')).toEqual([]);

    // When the commit goes through after all
    await gate.release();
    const [index] = await waitFor(
      async () => {
        const rows = await stored('landed-1');
        return rows.length > 0 ? rows : undefined;
      },
      10_000,
      'the original to land',
    );
    // And the client retries with the same key
    const retry = await publish('landed-1', 1);

    // Then the retry answers 200 with the stored original's index, and it is stored once
    expect(retry.status).toBe(200);
    expect(retry.body.id).toBe(index);
    expect(await stored('landed-1')).toEqual([index]);
  });

  it('a retry with the same key after the original failed stores it once', async () => {
    // Given commits of 'Held' messages wait at the gate, and the waiting commit will fail
    const gate = await holdCommits(true);
    // When a keyed message's commit outlasts the query timeout
    const first = await publish('failed-1', 2);
    expect(first.status).toBe(503);
    expect(first.body.outcomeUnknown).toBe(true);
    // And its commit then fails
    await gate.release();
    await gateIdle();
    expect(await stored('failed-1')).toEqual([]);
    await db.query('UPDATE test_commit_gate SET fail = false');

    // When the client retries with the same key
    const retry = await publish('failed-1', 2);

    // Then the retry stores it, once
    expect(retry.status).toBe(201);
    expect(await stored('failed-1')).toEqual([retry.body.id]);
  });
});
