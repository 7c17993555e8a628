import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUIDE = join(root, 'docs', 'consumer-groups.md');

/** The `sh` blocks of the guide's curl walk-through, in order, as written. */
function walkthrough(): string {
  const text = readFileSync(GUIDE, 'utf8');
  const start = text.indexOf('## Walk-through with curl');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
}

describe('docs/consumer-groups.md: the curl walk-through runs as written', () => {
  let db: TestDatabase;
  let server: OrdinalProcess;
  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startOrdinalProcess(db.url);
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('defines a group, fetches, acks, parks, shows status and parked, replays and fetches again', async () => {
    // Given the guide's blocks, run by bash with the server's URL and the development token
    const script = walkthrough();
    expect(script).toContain('/api/consumer-groups/invoices/parked/replay');
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      env: {
        PATH: process.env.PATH ?? '',
        ORDINAL_URL: server.baseUrl,
        ORDINAL_TOKEN: 'dev-ordinal-token',
      },
      timeout: 60_000,
    });
    // Then each printed line is what the guide says it is
    const [defined, fetched, acked, nacked, status, parked, replayed, again, ...rest] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown> & unknown[]);
    expect(rest).toEqual([]);
    expect(defined).toEqual({ group: 'invoices', state: 'idle', checkpoint: 0 });
    const events = fetched.events as Array<{
      index: number;
      customer: string;
      deliveryAttempt: number;
    }>;
    expect(fetched).toMatchObject({ memberId: 'worker-1', epoch: 1 });
    expect(events.map((e) => [e.customer, e.deliveryAttempt])).toEqual([
      ['c-1', 1],
      ['c-2', 1],
      ['c-3', 1],
    ]);
    const [first, ...others] = events.map((e) => e.index);
    const last = others.at(-1)!;
    expect(acked).toEqual({ acknowledged: [first], notHeld: [], checkpoint: first });
    expect(nacked).toEqual({ nacked: others, notHeld: [], checkpoint: last });
    expect(status).toEqual({
      state: 'active',
      checkpoint: last,
      lag: 0,
      inFlight: 0,
      parked: 2,
      members: [{ memberId: 'worker-1', epoch: 1, alive: true }],
    });
    expect(parked).toEqual(
      others.map((index) => ({ index, reason: 'customer unknown', attempts: 1 })),
    );
    expect(replayed).toEqual({ replayed: others, checkpoint: last });
    expect(again).toEqual(others.map((index) => ({ index, deliveryAttempt: 1 })));
  });
});
